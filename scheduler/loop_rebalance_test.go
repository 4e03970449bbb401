package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// setReady sets a Cluster's Ready condition, as the cluster monitor would.
func (e *env) setReady(t *testing.T, cluster, status string) {
	t.Helper()
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
		"type": "Ready", "status": status, "reason": "Test", "lastTransitionTime": "2026-11-29T00:00:00Z",
	}}, "status", "conditions"))
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
}

// TestReconcileRebalancePeriodRefillsRecoveredCluster: with rebalance off, running replicas
// stay put, but once per rebalancePeriod a cluster below its fair share (here one that was
// unreachable and came back) gets replicas back.
func TestReconcileRebalancePeriodRefillsRecoveredCluster(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.setReady(t, "azure", "False")
	e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("1"))
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, webEven) // rebalance off, period 5m
	res, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, res.RequeueAfter)
	require.Equal(t, map[string]int64{"aws": 4, "gcp": 5}, schedule(e.get(t)))

	// azure recovers a minute later: it gets its minimum at once, nothing more.
	e.clock.Step(time.Minute)
	e.setReady(t, "azure", "True")
	res, err = e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 4, "gcp": 4, "azure": 1}, schedule(e.get(t)))
	require.Equal(t, 4*time.Minute, res.RequeueAfter, "the rest of the period")

	// Before the period ends, replicas stay put.
	e.clock.Step(3 * time.Minute)
	_, err = e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 4, "gcp": 4, "azure": 1}, schedule(e.get(t)))

	// When it ends, azure gets its fair share back.
	e.clock.Step(time.Minute)
	res, err = e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	obj := e.get(t)
	require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": 3}, schedule(obj))
	require.Equal(t, 5*time.Minute, res.RequeueAfter)
	require.NotNil(t, obj.Status.Schedule.LastRebalanceTime)
	require.Equal(t, now.Add(5*time.Minute), obj.Status.Schedule.LastRebalanceTime.Time.UTC())

	// Later passes with nothing to move write nothing, once the refill's evictions ended
	// (nobody reports the replacements available here: at their deadline).
	require.Len(t, obj.Status.Schedule.Evictions, 2, "aws and gcp keep their replicas while azure's start")
	e.clock.Step(10 * time.Minute)
	_, err = e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Empty(t, e.get(t).Status.Schedule.Evictions)
	e.host.ClearActions()
	_, err = e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	for _, a := range e.host.Actions() {
		require.NotEqual(t, fake.VerbUpdateStatus, a.Verb, "nothing moved, nothing to write: %s", a)
	}
}

// TestReconcileRebalanceOnMovesAtOnce: with rebalance on, a recovered cluster gets its share
// on the next pass.
func TestReconcileRebalanceOnMovesAtOnce(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.setReady(t, "azure", "False")
	e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("1"))
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 9, rebalance: true, clusters: {"*": {weight: 1}}}
`)
	_, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	e.setReady(t, "azure", "True")
	res, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, res.RequeueAfter)
	require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": 3}, schedule(e.get(t)))
}
