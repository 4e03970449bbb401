package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

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
	require.Equal(t, "true", ns.GetAnnotations()[fedsync.CreatedNamespaceAnnotation])

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
