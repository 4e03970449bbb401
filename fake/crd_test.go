package fake_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

var gadgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}

func gadget(ns, name string) *unstructured.Unstructured {
	return typed("example.com/v1", "Gadget", ns, name, map[string]any{"size": int64(1)})
}

// TestCRDServesItsResource: creating a CRD serves its served versions at once, with its
// scope, kind and status subresource; the CRD is Established.
func TestCRDServesItsResource(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	def := crd("example.com", "gadgets", "Gadget", true)
	versions := def.Object["spec"].(map[string]any)["versions"].([]any)
	v2 := map[string]any{"name": "v2", "served": false, "storage": false,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}
	unstructured.SetNestedSlice(def.Object, append(versions, v2), "spec", "versions")
	_, err := c.List(ctx, gadgetGVR, "", metav1.ListOptions{})
	require.True(t, apierrors.IsNotFound(err), "before the CRD: %v", err)

	created := mustCreate(t, c, crdGVR, def)
	require.Equal(t, map[string]any{
		"acceptedNames":  map[string]any{"kind": "", "plural": ""},
		"storedVersions": []any{"v1"},
	}, created.Object["status"], "Create returns the status the strategy sets")
	require.Equal(t, "GadgetList", nested(t, created, "spec", "names", "listKind"), "defaulted")
	require.Equal(t, "gadget", nested(t, created, "spec", "names", "singular"), "defaulted")
	got, err := c.Get(ctx, crdGVR, "", "gadgets.example.com")
	require.NoError(t, err)
	require.Equal(t, "Gadget", nested(t, got, "status", "acceptedNames", "kind"))
	conds := map[string]any{}
	for _, cond := range nested(t, got, "status", "conditions").([]any) {
		m := cond.(map[string]any)
		conds[m["type"].(string)] = m["status"]
	}
	require.Equal(t, map[string]any{"NamesAccepted": "True", "Established": "True"}, conds)

	g := mustCreate(t, c, gadgetGVR, gadget("prod", "g"))
	require.EqualValues(t, 1, g.GetGeneration())
	g.Object["status"] = map[string]any{"ok": true}
	_, err = c.UpdateStatus(ctx, gadgetGVR, g)
	require.NoError(t, err, "the version declares the status subresource")
	list, err := c.List(ctx, gadgetGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, "GadgetList", list.GetKind())
	require.Len(t, list.Items, 1)
	_, err = c.List(ctx, gadgetGVR.GroupVersion().WithResource("gadgets").GroupResource().WithVersion("v2"), "", metav1.ListOptions{})
	require.True(t, apierrors.IsNotFound(err), "v2 is not served: %v", err)
	_, err = c.Create(ctx, gadgetGVR, gadget("", "g"))
	require.True(t, apierrors.IsBadRequest(err), "namespaced: %v", err)
}

// TestCRDWithoutStatusOrClusterScoped: the scope and the status subresource come from the
// CRD.
func TestCRDWithoutStatusOrClusterScoped(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	def := crd("example.com", "gadgets", "Gadget", false)
	unstructured.RemoveNestedField(def.Object["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any), "subresources")
	mustCreate(t, c, crdGVR, def)
	g := gadget("", "g")
	g.Object["status"] = map[string]any{"ok": true}
	created := mustCreate(t, c, gadgetGVR, g)
	require.Equal(t, map[string]any{"ok": true}, created.Object["status"], "no status subresource: Create keeps status")
	_, err := c.UpdateStatus(ctx, gadgetGVR, created)
	require.True(t, apierrors.IsNotFound(err), "UpdateStatus without the subresource = %v", err)
	_, err = c.Get(ctx, gadgetGVR, "anything", "g")
	require.NoError(t, err, "cluster-scoped: the namespace is ignored")
}

func TestCRDValidation(t *testing.T) {
	set := func(value any, fields ...string) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, value, fields...) }
	}
	version := func(mutate func(v map[string]any)) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			mutate(u.Object["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any))
		}
	}
	tests := []struct {
		name   string
		mutate func(u *unstructured.Unstructured)
		field  string
	}{
		{"name not plural.group", func(u *unstructured.Unstructured) { u.SetName("gizmos.example.com") }, "metadata.name"},
		{"group without a dot", func(u *unstructured.Unstructured) {
			u.SetName("gadgets.example")
			_ = unstructured.SetNestedField(u.Object, "example", "spec", "group")
		}, "spec.group"},
		{"unknown scope", set("Galaxy", "spec", "scope"), "spec.scope"},
		{"no kind", func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, "spec", "names", "kind") }, "spec.names.kind"},
		{"no storage version", version(func(v map[string]any) { v["storage"] = false }), "spec.versions"},
		{"no schema", version(func(v map[string]any) { delete(v, "schema") }), "spec.versions[0].schema.openAPIV3Schema"},
		{"protected group without approval", func(u *unstructured.Unstructured) {
			u.SetName("gadgets.example.k8s.io")
			_ = unstructured.SetNestedField(u.Object, "example.k8s.io", "spec", "group")
		}, "metadata.annotations[api-approved.kubernetes.io]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			def := crd("example.com", "gadgets", "Gadget", true)
			tc.mutate(def)
			_, err := c.Create(testCtx(t), crdGVR, def)
			require.Contains(t, invalidFields(t, err), tc.field)
		})
	}

	// The group and the scope cannot change.
	c := newCluster(t, "c")
	mustCreate(t, c, crdGVR, crd("example.com", "gadgets", "Gadget", true))
	established, err := c.Get(testCtx(t), crdGVR, "", "gadgets.example.com") // Create's copy is stale: it got established
	require.NoError(t, err)
	_ = unstructured.SetNestedField(established.Object, "Cluster", "spec", "scope")
	_, err = c.Update(testCtx(t), crdGVR, established)
	require.Equal(t, []string{"spec.scope"}, invalidFields(t, err))
}

// TestCRDDeletion: deleting a CRD deletes its objects, finalizers honoured; while some
// remain the CRD is terminating and new objects are Forbidden; then the resource is no longer
// served and its watches end.
func TestCRDDeletion(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	mustCreate(t, c, crdGVR, crd("example.com", "gadgets", "Gadget", true))
	mustCreate(t, c, gadgetGVR, gadget("prod", "free"))
	held := gadget("dev", "held")
	held.SetFinalizers([]string{"example.com/hold"})
	mustCreate(t, c, gadgetGVR, held)
	w, err := c.Watch(ctx, gadgetGVR, "", metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	defer w.Stop()
	require.Equal(t, []string{"ADDED dev/held", "ADDED prod/free"}, []string{refOf(nextEvent(t, w)), refOf(nextEvent(t, w))})

	require.NoError(t, c.Delete(ctx, crdGVR, "", "gadgets.example.com", metav1.DeleteOptions{}))
	require.Equal(t, "MODIFIED dev/held", refOf(nextEvent(t, w)), "the held object is marked deleting")
	require.Equal(t, "DELETED prod/free", refOf(nextEvent(t, w)))
	def, err := c.Get(ctx, crdGVR, "", "gadgets.example.com")
	require.NoError(t, err, "the CRD waits for its last object")
	require.NotNil(t, def.GetDeletionTimestamp())
	require.Equal(t, []string{"customresourcecleanup.apiextensions.k8s.io"}, def.GetFinalizers())
	_, err = c.Create(ctx, gadgetGVR, gadget("prod", "late"))
	require.True(t, apierrors.IsForbidden(err), "Create while the CRD terminates = %v", err)
	require.Contains(t, err.Error(), "create not allowed while custom resource definition is terminating")

	got, err := c.Get(ctx, gadgetGVR, "dev", "held")
	require.NoError(t, err, "the resource is still served")
	got.SetFinalizers(nil)
	_, err = c.Update(ctx, gadgetGVR, got)
	require.NoError(t, err)
	require.Equal(t, "DELETED dev/held", refOf(nextEvent(t, w)))
	requireClosed(t, w)
	_, err = c.Get(ctx, crdGVR, "", "gadgets.example.com")
	require.True(t, apierrors.IsNotFound(err), "the CRD is gone: %v", err)
	_, err = c.List(ctx, gadgetGVR, "", metav1.ListOptions{})
	require.True(t, apierrors.IsNotFound(err), "and its resource: %v", err)
	require.Equal(t, "the server could not find the requested resource", err.Error())
}

// TestCRDServedFlag: a version that stops being served is 404; its objects are kept, as in
// etcd, and come back when it is served again.
func TestCRDServedFlag(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	def := mustCreate(t, c, crdGVR, crd("example.com", "gadgets", "Gadget", true))
	mustCreate(t, c, gadgetGVR, gadget("prod", "g"))
	def, err := c.Get(ctx, crdGVR, "", def.GetName())
	require.NoError(t, err)
	serve := func(served bool) {
		t.Helper()
		def.Object["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["served"] = served
		def, err = c.Update(ctx, crdGVR, def)
		require.NoError(t, err)
	}
	serve(false)
	_, err = c.Get(ctx, gadgetGVR, "prod", "g")
	require.True(t, apierrors.IsNotFound(err))
	serve(true)
	_, err = c.Get(ctx, gadgetGVR, "prod", "g")
	require.NoError(t, err)
}

// refOf describes an event as "TYPE namespace/name".
func refOf(ev watch.Event) string {
	u := ev.Object.(*unstructured.Unstructured)
	return string(ev.Type) + " " + u.GetNamespace() + "/" + u.GetName()
}
