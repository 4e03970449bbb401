package sync

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// staleReader is an informer cache that lags: it serves an old version of the federated
// object (old) or of the Clusters (clusters), and everything else from the host.
type staleReader struct {
	federation.Reader
	gvr      schema.GroupVersionResource
	old      *unstructured.Unstructured
	clusters *unstructured.UnstructuredList
}

func (r staleReader) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if r.old != nil && gvr == r.gvr && ns == r.old.GetNamespace() && name == r.old.GetName() {
		return r.old.DeepCopy(), nil
	}
	return r.Reader.Get(ctx, gvr, ns, name)
}

func (r staleReader) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if r.clusters != nil && gvr == federation.ClusterGVR {
		return r.clusters.DeepCopy(), nil
	}
	return r.Reader.List(ctx, gvr, ns, opts)
}

// settingsIn is a fake fleet of aws and gcp with FederatedConfigMap prod/settings placed in
// both and propagated, and a function that lists where its ConfigMap is.
func settingsIn(t *testing.T) (*fedtest.Env, *Syncer, func() []string) {
	t.Helper()
	f := fedtest.New(t, fedtest.Options{Namespaces: []string{"prod"}, Members: []fedtest.Member{{Name: "aws"}, {Name: "gcp"}}})
	s, err := New(f.Host, f.Fleet, federation.ConfigMapType, Options{Clock: f.Clock, Registerer: f.Registry})
	require.NoError(t, err)
	where := func() (out []string) {
		for _, c := range []string{"aws", "gcp"} {
			m, _ := f.Fleet.Member(c)
			if _, err := m.Peek(federation.ConfigMapType.TargetGVR(), "prod", "settings"); err == nil {
				out = append(out, c)
			}
		}
		return out
	}
	fedtest.Apply(t, f.Host, federation.ConfigMapType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: settings, namespace: prod}
spec:
  placement: {clusters: [{name: aws}, {name: gcp}]}
  template: {data: {level: info}}
`)
	_, err = s.Reconcile(context.Background(), federation.Key{Namespace: "prod", Name: "settings"})
	require.NoError(t, err)
	require.Equal(t, []string{"aws", "gcp"}, where())
	return f, s, where
}

// setTaints replaces a Cluster's spec.taints on the host.
func setTaints(t *testing.T, f *fedtest.Env, cluster string, taints []any) {
	t.Helper()
	cl, err := f.Host.Get(context.Background(), federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(cl.Object, taints, "spec", "taints"))
	_, err = f.Host.Update(context.Background(), federation.ClusterGVR, cl)
	require.NoError(t, err)
}

var drain = []any{map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"}}

// TestAStaleReadNeverDeletes: a pass that reads a version of the federated object the host
// has moved past never deletes a member object on it. Here the cache still has the version
// it had while gcp was drained (so the pass takes the ConfigMap out of gcp), while the user
// has since deleted the object with the orphan annotation: every copy must stay, gcp's
// included.
func TestAStaleReadNeverDeletes(t *testing.T) {
	ctx := context.Background()
	f, s, where := settingsIn(t)
	typ, key := federation.ConfigMapType, federation.Key{Namespace: "prod", Name: "settings"}

	// The version the cache keeps, seen while gcp is drained: it leaves the placement.
	old, err := f.Host.Get(ctx, typ.FederatedGVR(), "prod", "settings")
	require.NoError(t, err)
	setTaints(t, f, "gcp", drain)
	// What the host has since: the user deleted it, orphaning its copies.
	cur, err := f.Host.Get(ctx, typ.FederatedGVR(), "prod", "settings")
	require.NoError(t, err)
	cur.SetAnnotations(map[string]string{federation.OrphanAnnotation: "true", federation.RevisionAnnotation: old.GetAnnotations()[federation.RevisionAnnotation]})
	_, err = f.Host.Update(ctx, typ.FederatedGVR(), cur)
	require.NoError(t, err)
	require.NoError(t, f.Host.Delete(ctx, typ.FederatedGVR(), "prod", "settings", metav1.DeleteOptions{}))

	_, err = s.reconcileWith(ctx, key, staleReader{Reader: f.Host, gvr: typ.FederatedGVR(), old: old})
	require.True(t, apierrors.IsConflict(err), "the stale pass says why it did nothing: %v", err)
	require.Equal(t, []string{"aws", "gcp"}, where(), "nothing deleted on a version the host has moved past")

	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, []string{"aws", "gcp"}, where(), "the deletion orphans both copies")
	for _, c := range []string{"aws", "gcp"} {
		m, _ := f.Fleet.Member(c)
		obj, err := m.Peek(typ.TargetGVR(), "prod", "settings")
		require.NoError(t, err)
		require.NotContains(t, obj.GetLabels(), federation.ManagedByLabel, c)
	}
}

// TestAStaleClusterNeverDeletes: a pass whose Cluster cache still has gcp drained, after the
// drain ended on the host, leaves gcp's copy where it is.
func TestAStaleClusterNeverDeletes(t *testing.T) {
	ctx := context.Background()
	f, s, where := settingsIn(t)
	key := federation.Key{Namespace: "prod", Name: "settings"}

	setTaints(t, f, "gcp", drain)
	drained, err := f.Host.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	setTaints(t, f, "gcp", nil)

	_, err = s.reconcileWith(ctx, key, staleReader{Reader: f.Host, clusters: drained})
	require.True(t, apierrors.IsConflict(err), "the stale pass says why it did nothing: %v", err)
	require.Equal(t, []string{"aws", "gcp"}, where(), "nothing deleted on a Cluster the host has moved past")

	// The same drain, current on the host, does take the copy out.
	setTaints(t, f, "gcp", drain)
	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Equal(t, []string{"aws"}, where())
}
