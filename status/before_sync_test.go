package status_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// Before sync has passed over a new object (no status.clusters, no Propagated condition) the
// Collector has nothing to report and writes nothing: a NoClusters Ready condition there was
// one more host write per new object, and a Conflict for sync's and the scheduler's writes.
// Once sync says the object is placed nowhere, NoClusters is written.
func TestCollectorWaitsForSyncOnANewObject(t *testing.T) {
	e := newEnv(t, status.Options{})
	require.NoError(t, e.host.Seed(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fedGVR.GroupVersion().String(), "kind": federation.DeploymentType.Federated.Kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "generation": int64(1)},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"replicas": int64(3)}}},
	}}))
	e.writes()

	res := e.reconcile(t)
	require.Equal(t, federation.DefaultStatusPollInterval, res.RequeueAfter)
	require.Zero(t, e.writes(), "no write before sync's")
	require.Equal(t, metav1.Condition{}, readyOf(e.get(t)))

	// Sync's pass: placed in no cluster.
	u, err := e.host.Peek(fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
		"type": federation.ConditionPropagated, "status": "True", "reason": "Propagated",
		"message": "placed in no cluster", "lastTransitionTime": "2026-11-30T12:00:00Z",
	}}, "status", "conditions"))
	_, err = e.host.UpdateStatus(ctx, fedGVR, u)
	require.NoError(t, err)
	e.writes()

	e.reconcile(t)
	require.Equal(t, 1, e.writes())
	ready := readyOf(e.get(t))
	require.Equal(t, status.ReasonNoClusters, ready.Reason, ready.Message)
	require.Equal(t, metav1.ConditionFalse, ready.Status)
}
