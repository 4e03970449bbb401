package fake_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// everyVerb calls each verb of the client on gvr and returns the errors by verb.
func everyVerb(ctx context.Context, c *fake.Cluster, gvr schema.GroupVersionResource) map[string]error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": "Thing"}}
	obj.SetNamespace("prod")
	obj.SetName("x")
	errs := map[string]error{}
	_, errs["get"] = c.Get(ctx, gvr, "prod", "x")
	_, errs["list"] = c.List(ctx, gvr, "prod", metav1.ListOptions{})
	_, errs["create"] = c.Create(ctx, gvr, obj.DeepCopy())
	_, errs["update"] = c.Update(ctx, gvr, obj.DeepCopy())
	_, errs["update-status"] = c.UpdateStatus(ctx, gvr, obj.DeepCopy())
	_, errs["patch"] = c.Patch(ctx, gvr, "prod", "x", types.MergePatchType, []byte(`{}`))
	errs["delete"] = c.Delete(ctx, gvr, "prod", "x", metav1.DeleteOptions{})
	w, err := c.Watch(ctx, gvr, "prod", metav1.ListOptions{})
	if w != nil {
		w.Stop()
	}
	errs["watch"] = err
	return errs
}

// TestUnservedResourceIsNotFound: a resource the cluster does not serve is a 404 on every
// verb, with the real server's message, and not an object's NotFound.
func TestUnservedResourceIsNotFound(t *testing.T) {
	c := newCluster(t, "c")
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "example.com", Version: "v1", Resource: "gadgets"},                   // no CRD
		{Group: "example.com", Version: "v2", Resource: "widgets"},                   // a version the CRD lacks
		{Group: "apps", Version: "v1beta1", Resource: "deployments"},                 // a version not served by default
		{Version: "v1", Resource: "foos"},                                            // no such built-in
		{Group: "core.federation.k8s.io", Version: "v1alpha1", Resource: "clusters"}, // not a host
	} {
		for verb, err := range everyVerb(testCtx(t), c, gvr) {
			require.True(t, apierrors.IsNotFound(err), "%s %s = %v", verb, gvr, err)
			require.Equal(t, "the server could not find the requested resource", err.Error(), "%s %s", verb, gvr)
			require.Empty(t, err.(apierrors.APIStatus).Status().Details.Name, "no object is named")
		}
	}
	require.Len(t, c.Actions(), 5*8, "the calls are recorded all the same")
}

// TestVerbsOfTheResource: a verb a built-in resource lacks is 405 where its URL has a route
// for another method, and 404 where it has none, as from the real server.
func TestVerbsOfTheResource(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	bindings := schema.GroupVersionResource{Version: "v1", Resource: "bindings"} // create only
	_, err := c.List(ctx, bindings, "prod", metav1.ListOptions{})
	require.True(t, apierrors.IsMethodNotSupported(err), "List bindings = %v", err)
	_, err = c.Get(ctx, bindings, "prod", "x")
	require.True(t, apierrors.IsNotFound(err), "Get bindings = %v", err)

	componentStatuses := schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"} // get, list
	_, err = c.List(ctx, componentStatuses, "", metav1.ListOptions{})
	require.NoError(t, err)
	err = c.Delete(ctx, componentStatuses, "", "etcd-0", metav1.DeleteOptions{})
	require.True(t, apierrors.IsMethodNotSupported(err), "Delete componentstatuses = %v", err)
}

func TestRESTMapping(t *testing.T) {
	c := newCluster(t, "c")
	tests := []struct {
		gvk       schema.GroupVersionKind
		resource  string
		namespace bool
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, "endpoints", true},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}, "ingressclasses", false},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true},
	}
	for _, tc := range tests {
		m, err := c.RESTMapping(tc.gvk)
		require.NoError(t, err, tc.gvk)
		require.Equal(t, tc.gvk.GroupVersion().WithResource(tc.resource), m.Resource)
		require.Equal(t, tc.namespace, m.Scope.Name() == meta.RESTScopeNameNamespace, tc.gvk)
	}
	_, err := c.RESTMapping(federation.ClusterGVK)
	require.True(t, meta.IsNoMatchError(err), "RESTMapping(Cluster) on a member = %v", err)
	m, err := fake.NewHost("h").RESTMapping(federation.ClusterGVK)
	require.NoError(t, err)
	require.Equal(t, federation.ClusterGVR, m.Resource)
}

// TestSeedFindsTheServedResource: Seed stores an object under the resource serving its kind,
// irregular plurals included, and refuses a kind nobody serves.
func TestSeedFindsTheServedResource(t *testing.T) {
	c := newCluster(t, "c")
	ep := typed("v1", "Endpoints", "prod", "web", nil)
	require.NoError(t, c.Seed(ep))
	_, err := c.Peek(schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, "prod", "web")
	require.NoError(t, err)

	err = c.Seed(typed("example.com/v1", "Gadget", "prod", "g", nil))
	require.True(t, apierrors.IsNotFound(err), "Seed of an unserved kind = %v", err)
	require.Contains(t, err.Error(), "Gadget")
}
