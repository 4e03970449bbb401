package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// TestReconcileDividesTheAutoscalersTotal: with spec.autoscale the scheduler divides the
// autoscaler's total (status.autoscale.desiredReplicas), with the same cluster preferences,
// and before the autoscaler's first decision spec.totalReplicas within the fleet's bounds.
func TestReconcileDividesTheAutoscalersTotal(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 2
  clusters:
    "*": {weight: 1}
    aws: {minReplicas: 2, maxReplicas: 6, weight: 2}
  autoscale: {minReplicas: 4, maxReplicas: 30}
`)
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 2, "azure": 1, "gcp": 1}, schedule(e.federated(t, federation.DeploymentType)),
		"before the autoscaler decides, spec.totalReplicas raised to the fleet's minReplicas")

	// The autoscaler writes its decision to the preference's status.
	u, err := e.host.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, int64(18), "status", "autoscale", "desiredReplicas"))
	_, err = e.host.UpdateStatus(ctx, federation.ReplicaSchedulingPreferenceGVR, u)
	require.NoError(t, err)
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	obj := e.federated(t, federation.DeploymentType)
	require.Equal(t, map[string]int64{"aws": 6, "azure": 6, "gcp": 6}, schedule(obj), "18 divided with aws capped at 6")
	require.Contains(t, scheduled(obj).Message, "18/18 replicas")
}
