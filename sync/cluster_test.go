package sync_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// leave deletes the Cluster azure from the host, as an operator removing it from the
// federation would.
func (e *env) leave(t *testing.T, name string) {
	t.Helper()
	require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", name, deleteOpts()))
}

func (e *env) clusterGone(t *testing.T, name string) bool {
	t.Helper()
	_, err := e.host.Peek(federation.ClusterGVR, "", name)
	return apierrors.IsNotFound(err)
}

func TestClusterLeavingOrphansByDefault(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	c, err := e.host.Peek(federation.ClusterGVR, "", "azure")
	require.NoError(t, err)
	require.Contains(t, c.GetFinalizers(), fedsync.ClusterFinalizer(e.typ, ""), "sync holds a cluster it has objects in")

	e.leave(t, "azure")
	require.False(t, e.clusterGone(t, "azure"), "held until sync has cleaned up")
	res, err := e.s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
	require.NoError(t, err)
	require.Positive(t, res.RequeueAfter, "the object is still managed there")

	e.reconcile(t) // the object's pass orphans it
	m := e.member(t, "azure")
	require.NotNil(t, m, "orphaned, not deleted")
	require.NotContains(t, m.GetLabels(), federation.ManagedByLabel)
	require.NotContains(t, propagation(e.fed(t)), "azure")
	require.Equal(t, "True", string(propagated(e.fed(t)).Status), "the remaining clusters are all in sync")

	_, err = e.s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
	require.NoError(t, err)
	require.True(t, e.clusterGone(t, "azure"), "released once nothing of sync's is left there")
}

func TestClusterLeavingWithDeletePolicy(t *testing.T) {
	e := newEnv(t, fedsync.Options{ClusterRemoval: fedsync.RemovalDelete})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.leave(t, "azure")
	e.reconcile(t)
	require.Nil(t, e.member(t, "azure"))
	_, err := e.s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
	require.NoError(t, err)
	require.True(t, e.clusterGone(t, "azure"))
}

func TestUnreachableClusterLeavingIsReleasedAfterTheTimeout(t *testing.T) {
	e := newEnv(t, fedsync.Options{DeletionTimeout: 10 * time.Minute})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.NoError(t, e.fleet.Partition("azure"))
	e.leave(t, "azure")
	_, _ = e.s.Reconcile(ctx, key) // cannot reach azure
	_, err := e.s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
	require.NoError(t, err)
	require.False(t, e.clusterGone(t, "azure"))
	e.clock.Step(10 * time.Minute)
	_, err = e.s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
	require.NoError(t, err)
	require.True(t, e.clusterGone(t, "azure"), "released after the timeout")
	events := e.events.list()
	require.Contains(t, events[len(events)-1], "MembersLeftBehind")
}

// A FederatedNamespace Syncer holds a leaving cluster for its own namespaces only: the
// namespaces other Syncers created there for their objects (CreatedNamespaceAnnotation) are
// not its to clean up, and must not keep the Cluster until the deletion timeout (found by
// the chaos soak, test/soak: the Cluster stayed 10 minutes, then a false MembersLeftBehind).
func TestNamespaceSyncerReleasesALeavingClusterDespiteNamespacesSyncCreated(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	nsSyncer, err := fedsync.New(e.host, e.fleet, federation.NamespaceType, fedsync.Options{Clock: e.clock})
	require.NoError(t, err)
	e.mustCreate(t, e.host, namespaces, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team"}}})
	e.apply(t, federation.NamespaceType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedNamespace
metadata: {name: team, namespace: team}
spec:
  placement: {clusterSelector: {}}
`)
	team := federation.Key{Namespace: "team", Name: "team"}
	_, err = nsSyncer.Reconcile(ctx, team)
	require.NoError(t, err)
	e.apply(t, e.typ.FederatedGVR(), frontend) // in "production": the Deployment Syncer creates it
	e.reconcile(t)
	ns, err := e.cluster(t, "azure").Peek(namespaces, "", "production")
	require.NoError(t, err)
	require.Equal(t, "true", ns.GetAnnotations()[plan.CreatedNamespaceAnnotation])

	e.leave(t, "azure")
	_, err = nsSyncer.Reconcile(ctx, team) // orphans "team" in azure
	require.NoError(t, err)
	e.reconcile(t) // orphans the Deployment in azure
	for _, s := range []*fedsync.Syncer{nsSyncer, e.s} {
		_, err = s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
		require.NoError(t, err)
	}
	require.True(t, e.clusterGone(t, "azure"), "released once each Syncer's own objects are orphaned")
	for _, ev := range e.events.list() {
		require.NotContains(t, ev, "MembersLeftBehind")
	}
}
