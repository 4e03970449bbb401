package sync_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// Two federations (identities) share a host and a fleet: one finishing its cleanup of a
// leaving cluster never releases the Cluster that the other still has objects in.
func TestClusterFinalizerIsPerIdentity(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)

	e.mustCreate(t, e.host, namespaces, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "staging"}}})
	other := federation.Key{Namespace: "staging", Name: "app-frontend"}
	e.apply(t, e.typ.FederatedGVR(), strings.Replace(frontend, "namespace: production", "namespace: staging", 1))
	teamB, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, Identity: "team-b", Namespace: "staging"})
	require.NoError(t, err)
	_, err = teamB.Reconcile(ctx, other)
	require.NoError(t, err)
	theirs, err := e.cluster(t, "azure").Peek(deployments, "staging", "app-frontend")
	require.NoError(t, err)
	require.Equal(t, "team-b", theirs.GetLabels()[federation.ManagedByLabel])

	e.leave(t, "azure")
	e.reconcile(t) // orphans fedkit's object in azure
	_, err = e.s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
	require.NoError(t, err)
	require.False(t, e.clusterGone(t, "azure"), "team-b still manages an object in azure")

	_, err = teamB.Reconcile(ctx, other) // orphans team-b's
	require.NoError(t, err)
	_, err = teamB.ReconcileCluster(ctx, federation.Key{Name: "azure"})
	require.NoError(t, err)
	require.True(t, e.clusterGone(t, "azure"), "released once neither federation has anything left there")
}

func TestClusterFinalizerNames(t *testing.T) {
	long := strings.Repeat("a", 63)
	cases := []struct{ identity, want string }{
		{"", "federation.k8s.io/sync-federateddeployments"},
		{federation.ManagedByValue, "federation.k8s.io/sync-federateddeployments"},
		{"team-b", "federation.k8s.io/sync-federateddeployments.team-b"},
		{long, ""}, // hashed: checked below
	}
	seen := map[string]string{}
	for _, c := range cases {
		got := fedsync.ClusterFinalizer(federation.DeploymentType, c.identity)
		if c.want != "" {
			require.Equal(t, c.want, got, c.identity)
		}
		require.Empty(t, validation.IsQualifiedName(got), "%q is a valid finalizer name", got)
		if prev, ok := seen[got]; ok && identityOrDefault(prev) != identityOrDefault(c.identity) {
			t.Fatalf("identities %q and %q share the finalizer %q", prev, c.identity, got)
		}
		seen[got] = c.identity
	}
	require.NotEqual(t, fedsync.ClusterFinalizer(federation.DeploymentType, long), fedsync.ClusterFinalizer(federation.DeploymentType, long[1:]+"b"))
}

func identityOrDefault(id string) string {
	if id == "" {
		return federation.ManagedByValue
	}
	return id
}
