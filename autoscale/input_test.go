package autoscale_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestInvalidPreferenceHolds: a preference the CRD let through but validation refuses
// (maxReplicas below minReplicas) holds the total, says why in ScalingActive and a Warning,
// and is not retried until it changes (a terminal error).
func TestInvalidPreferenceHolds(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	require.NoError(t, e.pass(t))
	fedtest.Apply(t, e.Host, rspGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 6
  clusters: {"*": {weight: 1}}
  autoscale: {minReplicas: 10, maxReplicas: 5}
`)
	_, err := e.a.Reconcile(ctx, key)
	require.True(t, federation.IsTerminal(err), "%v", err)
	c := e.condition(t, federation.ConditionScalingActive)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, autoscale.ReasonInvalidPreference, c.Reason)
	require.Contains(t, c.Message, "spec.autoscale.maxReplicas")
	require.Equal(t, int32(6), *e.rsp(t).Status.Autoscale.DesiredReplicas, "the last total holds")
	require.Len(t, e.events.take(), 1)
}

// TestTargetKindAndObject: a targetKind whose replicas are not divided, and a federated
// object that does not exist, hold the total with the reason in ScalingActive.
func TestTargetKindAndObject(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	require.NoError(t, e.Host.Delete(ctx, fedGVR, key.Namespace, key.Name, metav1.DeleteOptions{}))
	_, err := e.a.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, autoscale.ReasonTargetNotFound, e.condition(t, federation.ConditionScalingActive).Reason)

	fedtest.Apply(t, e.Host, rspGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec: {targetKind: FederatedConfigMap, totalReplicas: 6, autoscale: {maxReplicas: 5}}
`)
	_, err = e.a.Reconcile(ctx, key)
	require.True(t, federation.IsTerminal(err), "%v", err)
	c := e.condition(t, federation.ConditionScalingActive)
	require.Equal(t, autoscale.ReasonUnsupportedTarget, c.Reason)
	require.Contains(t, c.Message, "FederatedDeployment, FederatedStatefulSet, FederatedReplicaSet")
}

// TestAutoscaleRemoved: without spec.autoscale, status.autoscale goes and the scheduler
// divides spec.totalReplicas again.
func TestAutoscaleRemoved(t *testing.T) {
	e := newEnv(t, cpu60, autoscale.Options{})
	for _, m := range members {
		e.load[m] = 1800
	}
	e.setLoad(t)
	require.NoError(t, e.pass(t))
	require.Equal(t, int64(9), e.total(t))
	fedtest.Apply(t, e.Host, rspGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec: {targetKind: FederatedDeployment, totalReplicas: 6, clusters: {"*": {weight: 1}}}
`)
	require.NoError(t, e.pass(t))
	require.Nil(t, e.rsp(t).Status.Autoscale)
	require.Equal(t, map[string]int64{"ap": 2, "eu": 2, "us": 2}, e.shares(t))
}
