package scheduler_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// A Cluster being deleted is leaving the federation: sync places nothing there any more
// (sync.TargetsFor), so the scheduler must not give it replicas either, or they are lost
// until the Cluster is gone (found by the chaos soak, test/soak: a preference of 6 ran 5).
func TestReconcileLeavesOutClustersBeingDeleted(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs []string
		want map[string]int64
	}{
		{name: "duplicated", docs: []string{frontend}, want: map[string]int64{"aws": 6, "gcp": 6}},
		{name: "preference", docs: []string{frontend, rsp}, want: map[string]int64{"aws": 6, "gcp": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, federation.DeploymentType)
			// Something (sync's cluster finalizer) holds the Cluster while it leaves.
			c, err := e.host.Get(ctx, federation.ClusterGVR, "", "azure")
			require.NoError(t, err)
			c.SetFinalizers([]string{"example.com/hold"})
			_, err = e.host.Update(ctx, federation.ClusterGVR, c)
			require.NoError(t, err)
			require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", "azure", metav1.DeleteOptions{}))
			e.apply(t, federation.DeploymentType.FederatedGVR(), tc.docs[0])
			if len(tc.docs) > 1 {
				e.apply(t, federation.ReplicaSchedulingPreferenceGVR, tc.docs[1])
			}

			_, err = e.s.Reconcile(ctx, key)
			require.NoError(t, err)
			obj := e.federated(t, federation.DeploymentType)
			if diff := cmp.Diff(tc.want, schedule(obj)); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

// A refill (rebalance off, the period over) moves replicas to the clusters below their share.
// Until the members run the new counts, the collector's observations still show the old
// ones: the next pass, which may not refill again, must not read them as where replicas run
// now and move everything back (found by the chaos soak, test/soak, in Run mode: every
// rebalance period a refill and its reversal, forever).
func TestRefillIsNotUndoneByObservationsOlderThanIt(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 9
  clusters: {"*": {weight: 1}}
`)
	// The state after azure and gcp were away: aws runs 7, and says so; the period is over.
	long := metav1.NewTime(now.Add(-time.Hour))
	u, err := e.host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	observed := func(name string, n int64) map[string]any {
		return map[string]any{"name": name, "revision": int64(1), "replicas": n, "readyReplicas": n, "lastObserved": long.UTC().Format(time.RFC3339)}
	}
	u.Object["status"] = map[string]any{
		"schedule": map[string]any{
			"clusters":          []any{map[string]any{"name": "aws", "replicas": int64(7)}, map[string]any{"name": "azure", "replicas": int64(1)}, map[string]any{"name": "gcp", "replicas": int64(1)}},
			"lastRebalanceTime": long.UTC().Format(time.RFC3339),
		},
		"clusters": []any{observed("aws", 7), observed("azure", 1), observed("gcp", 1)},
	}
	_, err = e.host.UpdateStatus(ctx, federation.DeploymentType.FederatedGVR(), u)
	require.NoError(t, err)

	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	want := map[string]int64{"aws": 3, "azure": 3, "gcp": 3}
	require.Equal(t, want, schedule(e.federated(t, federation.DeploymentType)), "the refill")

	e.clock.Step(time.Second)
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, want, schedule(e.federated(t, federation.DeploymentType)), "observations from before the refill do not undo it")
}

// A schedule names the clusters it left out only for not being ready (status.schedule.notReady),
// so that sync can tell "not placed" from "not looked at since it is ready again".
func TestScheduleRecordsNotReadyClusters(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", "gcp")
	require.NoError(t, err)
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "False", "reason": "ClusterUnreachable", "message": "no heartbeat",
		"lastTransitionTime": "2026-11-29T00:00:00Z",
	}}}
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)

	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	obj := e.federated(t, federation.DeploymentType)
	require.Equal(t, map[string]int64{"aws": 6, "azure": 6}, schedule(obj))
	require.Equal(t, []string{"gcp"}, obj.Status.Schedule.NotReady)
}
