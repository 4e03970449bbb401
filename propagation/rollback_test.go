package propagation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/propagation"
)

// TestReconcileCarriesOutAnAutomatedRollback: when sync's automated rollback restored a
// generated object's spec and marked it (federation.RolledBackAnnotation), the loop restores
// the template into the native object, by a patch, and renders the object again from it: the
// rollback stays, the mark goes, and a second pass writes nothing. A native object changed
// since the object was rendered from it wins: nothing is restored, and the object follows the
// native one.
func TestReconcileCarriesOutAnAutomatedRollback(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	fedtest.Create(t, host, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	fedtest.Create(t, host, cpps, webPolicy)
	fedtest.Create(t, host, deployments, nativeDeployment("web", "nginx:1"))
	events := &recorder{}
	p, err := propagation.New(host, []federation.TypeConfig{federation.DeploymentType}, propagation.Options{Events: events})
	require.NoError(t, err)
	key := federation.Key{Namespace: "shop", Name: "web"}
	pass := func() {
		t.Helper()
		_, err := p.Reconcile(ctx, key)
		require.NoError(t, err)
	}
	image := func(gvr schema.GroupVersionResource, path ...string) string {
		t.Helper()
		u, err := host.Peek(gvr, "shop", "web")
		require.NoError(t, err)
		cs, _, _ := unstructured.NestedSlice(u.Object, append(path, "spec", "template", "spec", "containers")...)
		require.NotEmpty(t, cs)
		return cs[0].(map[string]any)["image"].(string)
	}
	setImage := func(gvr schema.GroupVersionResource, img string, path ...string) {
		t.Helper()
		u, err := host.Get(ctx, gvr, "shop", "web")
		require.NoError(t, err)
		cs, _, _ := unstructured.NestedSlice(u.Object, append(path, "spec", "template", "spec", "containers")...)
		cs[0].(map[string]any)["image"] = img
		require.NoError(t, unstructured.SetNestedSlice(u.Object, cs, append(path, "spec", "template", "spec", "containers")...))
		if gvr == fdeployments {
			ann := u.GetAnnotations()
			ann[federation.RolledBackAnnotation] = "1"
			u.SetAnnotations(ann)
		}
		_, err = host.Update(ctx, gvr, u)
		require.NoError(t, err)
	}
	// state: the native image, the generated object's, and its mark.
	state := func() []string {
		fed, err := host.Peek(fdeployments, "shop", "web")
		require.NoError(t, err)
		return []string{image(deployments), image(fdeployments, "spec", "template"), fed.GetAnnotations()[federation.RolledBackAnnotation]}
	}
	check := func(step string, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, state()); diff != "" {
			t.Fatalf("%s: native image, generated image, mark (-want +got):\n%s", step, diff)
		}
	}

	pass()
	setImage(deployments, "nginx:broken")
	pass()
	check("the new image", "nginx:broken", "nginx:broken", "")

	// Sync rolls the generated object back to revision 1 and marks it.
	setImage(fdeployments, "nginx:1", "spec", "template")
	pass()
	check("carried out", "nginx:1", "nginx:1", "")
	require.Equal(t, 1, events.count("Deployment web Warning RolledBack"), events.all())
	host.ClearActions()
	pass()
	if w := writes(host.Actions()); len(w) > 0 {
		t.Errorf("a pass after the rollback wrote %v", w)
	}

	// The user changed the native object after sync rendered what failed: theirs wins.
	setImage(deployments, "nginx:broken")
	pass()
	setImage(deployments, "nginx:3")
	setImage(fdeployments, "nginx:1", "spec", "template")
	pass()
	check("the user's newer change wins", "nginx:3", "nginx:3", "")
}
