package sync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// pruning makes a member drop spec.replicaz on every write, as a real API server drops the
// fields its types do not have.
func pruning(next func(context.Context, schema.GroupVersionResource, *unstructured.Unstructured) (*unstructured.Unstructured, error)) func(ctx context.Context, _ federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return func(ctx context.Context, _ federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		obj = obj.DeepCopy()
		unstructured.RemoveNestedField(obj.Object, "spec", "replicaz")
		return next(ctx, gvr, obj)
	}
}

// A template field the member's server does not keep (unknown to its types) is not drift:
// once sync has seen the server drop it, another writer's change to the object (a member
// controller's status, an annotation) causes no update (found with real API servers by the
// hostile input table, test/sync: one useless update per change of anyone else's).
func TestFieldsTheMemberDropsAreNotDrift(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	for _, name := range clusterNames {
		c := e.cluster(t, name)
		c.SetHooks(fake.Hooks{
			Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return pruning(next.Create)(ctx, next, gvr, obj)
			},
			Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return pruning(next.Update)(ctx, next, gvr, obj)
			},
		})
	}
	e.apply(t, e.typ.FederatedGVR(), frontend)
	u, err := e.host.Get(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, int64(3), "spec", "template", "spec", "replicaz"))
	_, err = e.host.Update(ctx, e.typ.FederatedGVR(), u)
	require.NoError(t, err)
	e.reconcile(t)
	_, found, _ := unstructured.NestedFieldNoCopy(e.member(t, "aws").Object, "spec", "replicaz")
	require.False(t, found, "the member dropped it")

	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a["team.example.com/seen"] = "yes"
		u.SetAnnotations(a)
	}))
	e.cluster(t, "aws").ClearActions()
	e.reconcile(t)
	for _, a := range e.cluster(t, "aws").Actions() {
		require.False(t, writeVerbs[a.Verb], "a write for a field the member does not keep: %s", a)
	}

	// Real drift is still corrected.
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) { setMemberImage(u, "evil:1") }))
	e.reconcile(t)
	cs, _, _ := unstructured.NestedSlice(e.member(t, "aws").Object, "spec", "template", "spec", "containers")
	require.Equal(t, frontendImage, cs[0].(map[string]any)["image"])
}
