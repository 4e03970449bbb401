package sync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// The member objects sync created before its status write failed are not in status.clusters.
// When such a cluster is not ready as the federated object is deleted, it must still hold
// the finalizer (until the deletion timeout): it may hold the object, since placement puts it
// there. Otherwise the object stays behind in that cluster, managed, with nobody to remove it
// and no event saying so (found by the chaos soak, test/soak).
func TestDeletionWaitsForNotReadyClustersStatusDoesNotList(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.host.SetHooks(fake.Hooks{UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return nil, apierrors.NewServiceUnavailable("host busy")
	}})
	_, err := e.s.Reconcile(ctx, key)
	require.Error(t, err, "the status write failed")
	e.host.SetHooks(fake.Hooks{})
	require.NotNil(t, e.member(t, "azure"))
	require.Empty(t, e.fed(t).Status.Clusters, "status does not know yet")

	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host)) // azure is not Ready
	e.deletionWaitsForAzure(t)
}

// A cluster that is not ready keeps its status.clusters entry while it may still hold the
// object, even when placement has left it meanwhile: sync deletes the object there once the
// cluster is back, and a deletion of the federated object waits for that (found by the chaos
// soak, test/soak: placement moved away from a partitioned cluster, the object was deleted,
// and its copy in that cluster stayed behind, managed, with no event).
func TestNotReadyClusterStaysListedAfterPlacementLeavesIt(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	u, err := e.host.Get(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters"))
	_, err = e.host.Update(ctx, e.typ.FederatedGVR(), u)
	require.NoError(t, err)
	e.reconcile(t)
	require.Equal(t, plan.ReasonClusterNotReady+"@1", propagation(e.fed(t))["azure"], "azure may still hold the object")

	e.deletionWaitsForAzure(t)
}

// The member caches keep what a cluster that is not ready last held: a deletion waits for such
// a cluster when its cache shows the object, even when neither status.clusters (its write
// failed) nor placement (it moved away) says the object is there (found by the chaos soak,
// test/soak, at full size: the copy stayed behind, managed, with no event).
func TestDeletionWaitsForNotReadyClustersTheCacheShowsTheObjectIn(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.host.SetHooks(fake.Hooks{UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if gvr == e.typ.FederatedGVR() {
			return nil, apierrors.NewServiceUnavailable("host busy")
		}
		return next.UpdateStatus(ctx, gvr, obj)
	}})
	_, err := e.s.Reconcile(ctx, key)
	require.Error(t, err, "the status write failed")
	require.NotNil(t, e.member(t, "azure"))
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host)) // azure is not Ready
	u, err := e.host.Get(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters"))
	_, err = e.host.Update(ctx, e.typ.FederatedGVR(), u)
	require.NoError(t, err)
	_, _ = e.s.Reconcile(ctx, key) // the status write fails again
	e.host.SetHooks(fake.Hooks{})
	require.Empty(t, e.fed(t).Status.Clusters, "status does not know")

	e.deletionWaitsForAzure(t)
}

// deletionWaitsForAzure deletes the federated object while azure, not ready, may hold a copy
// that status does not record: the finalizer stays; once azure is back the copy is deleted
// and the object released.
func (e *env) deletionWaitsForAzure(t *testing.T) {
	t.Helper()
	require.NoError(t, e.host.Delete(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name, deleteOpts()))
	_, _ = e.s.Reconcile(ctx, key)
	_, err := e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err, "the finalizer was removed while azure may still hold the object")

	require.NoError(t, e.fleet.Heal("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Nil(t, e.member(t, "azure"), "deleted once azure is back")
	_, err = e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.True(t, apierrors.IsNotFound(err), "then released: %v", err)
}

// A deletion never waits for a cluster that is not ready and holds no copy: one the object
// was never placed in (it was not ready all along) is shown empty by its member cache, which
// keeps the cluster's last state, and the finalizer goes at once. Before, any not-ready
// cluster that placement selects held every deletion for the whole DeletionTimeout.
func TestDeletionDoesNotWaitForANotReadyClusterWithoutACopy(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	// azure's cache of Deployments started while it was in reach (as Run's member watch
	// starts it), then azure went away before the object was made.
	_, err := e.fleet.CachedReader("azure", deployments)
	require.NoError(t, err)
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	e.apply(t, e.typ.FederatedGVR(), frontend)
	_, _ = e.s.Reconcile(ctx, key)
	require.Nil(t, e.member(t, "azure"))
	require.Equal(t, plan.ReasonClusterNotReady+"@0", propagation(e.fed(t))["azure"])

	e.deleteFederated(t)
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.True(t, e.gone(t), "azure holds no copy: the deletion does not wait for it")
	require.Nil(t, e.member(t, "aws"))
}

// Without member caches, sync reads a cluster that is not ready but answers: a NotFound there
// is the proof it holds no copy, and the deletion does not wait for it either. One that does
// not answer may hold a copy, and keeps the deletion waiting (TestDeletionWithADeadClusterReleasesAfterTimeout).
func TestDeletionReadsANotReadyClusterWithoutACache(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	s, err := fedsync.New(e.host, liveMembers{e.fleet}, e.typ, fedsync.Options{Clock: e.clock, Events: e.events})
	require.NoError(t, err)
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", "azure")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": federation.ConditionReady, "status": "False",
		"reason": "ClusterNotReady", "message": "readyz failed", "lastTransitionTime": "2026-11-30T11:00:00Z"}}, "status", "conditions"))
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	_, _ = s.Reconcile(ctx, key)
	require.NotNil(t, e.member(t, "aws"))
	require.Nil(t, e.member(t, "azure"))

	e.deleteFederated(t)
	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.True(t, e.gone(t), "azure holds no copy: the deletion does not wait for it")
}
