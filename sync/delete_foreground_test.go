package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// With DeletionPropagation Foreground the member objects wait for their dependents
// (foregroundDeletion, which their garbage collector removes), and so does the federated object.
func TestForegroundDeletionHoldsTheFederatedObject(t *testing.T) {
	e := newEnv(t, fedsync.Options{DeletionPropagation: metav1.DeletePropagationForeground})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.clearActions()
	e.deleteFederated(t)
	e.reconcile(t)
	require.False(t, e.gone(t))
	for _, c := range clusterNames {
		dels := e.deleteActions(t, c, deployments)
		require.Len(t, dels, 1, c)
		require.Equal(t, metav1.DeletePropagationForeground, *dels[0].PropagationPolicy, c)
		m := e.member(t, c)
		require.NotNil(t, m, c)
		require.Equal(t, []string{metav1.FinalizerDeleteDependents}, m.GetFinalizers(), c)
	}
	// The member garbage collectors finish.
	for _, c := range clusterNames {
		require.NoError(t, e.cluster(t, c).Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) { u.SetFinalizers(nil) }))
	}
	e.reconcile(t)
	require.True(t, e.gone(t))
}

func TestDeletionPropagationOrphanIsRefused(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	_, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{DeletionPropagation: metav1.DeletePropagationOrphan})
	require.ErrorContains(t, err, `unknown deletion propagation "Orphan"`)
}

// A copy deleted because its cluster left the placement, and held by its finalizers, keeps
// its cluster in status.clusters (WaitingForRemoval) until it is NotFound: what runs there,
// and what depends on it (its dependencies), is still there.
func TestPlacementDeleteHeldByFinalizersStaysListed(t *testing.T) {
	e := newEnv(t, fedsync.Options{DeletionPropagation: metav1.DeletePropagationForeground})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters"))
	})
	res := e.reconcile(t)
	m := e.member(t, "azure")
	require.NotNil(t, m)
	require.NotNil(t, m.GetDeletionTimestamp())
	require.Equal(t, map[string]string{"aws": "@2", "gcp": "@2", "azure": plan.ReasonWaitingForRemoval + "@1"}, propagation(e.fed(t)))
	require.Positive(t, res.RequeueAfter, "a pass looks again where no member cache brings it back")
	e.reconcile(t)
	require.Equal(t, plan.ReasonWaitingForRemoval+"@1", propagation(e.fed(t))["azure"], "still held")

	// The member's garbage collector finishes.
	require.NoError(t, e.cluster(t, "azure").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) { u.SetFinalizers(nil) }))
	e.reconcile(t)
	require.Equal(t, map[string]string{"aws": "@2", "gcp": "@2"}, propagation(e.fed(t)))
}
