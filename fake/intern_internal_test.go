package fake

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var internConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func internConfigMap(name, version string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": name, "labels": map[string]any{"app": name}},
		"data":     map[string]any{"version": version, "app.properties": "color=blue\n"},
	}}
}

func sameValue(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func storedField(t *testing.T, c *Cluster, name string, fields ...string) any {
	t.Helper()
	c.lock()
	defer c.mu.Unlock()
	obj, ok := c.objects[internConfigMaps][objectKey{"default", name}]
	require.True(t, ok, "%s/%s not stored", c.Name(), name)
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	require.NoError(t, err)
	require.True(t, found, "%v of %s", fields, name)
	return v
}

// TestInternSharesAcrossMembers: the same object created in two members of a fleet is stored
// with one labels map and one data map, and what a client does with its copy reaches neither.
func TestInternSharesAcrossMembers(t *testing.T) {
	ctx := context.Background()
	f := NewFleet()
	f.SetInterning(true)
	a, b := f.Add("a", nil), f.Add("b", nil)
	for _, c := range []*Cluster{a, b} {
		_, err := c.Create(ctx, internConfigMaps, internConfigMap("web", "1"))
		require.NoError(t, err)
	}
	require.True(t, sameValue(storedField(t, a, "web", "data"), storedField(t, b, "web", "data")), "data not shared")
	require.True(t, sameValue(storedField(t, a, "web", "metadata", "labels"), storedField(t, b, "web", "metadata", "labels")), "labels not shared")
	require.False(t, sameValue(storedField(t, a, "web", "metadata"), storedField(t, b, "web", "metadata")), "metadata (uid, resourceVersion) must be each member's own")

	// A client's copy is its own: changing it changes neither store.
	got, err := a.Get(ctx, internConfigMaps, "default", "web")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(got.Object, "changed", "data", "version"))
	for _, c := range []*Cluster{a, b} {
		u, err := c.Get(ctx, internConfigMaps, "default", "web")
		require.NoError(t, err)
		if diff := cmp.Diff(map[string]any{"version": "1", "app.properties": "color=blue\n"}, u.Object["data"]); diff != "" {
			t.Errorf("%s data (-want +got):\n%s", c.Name(), diff)
		}
	}

	// An update in one member stores new data there and leaves the other's alone.
	got, err = b.Get(ctx, internConfigMaps, "default", "web")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(got.Object, "2", "data", "version"))
	_, err = b.Update(ctx, internConfigMaps, got)
	require.NoError(t, err)
	require.Equal(t, "1", storedField(t, a, "web", "data", "version"))
	require.Equal(t, "2", storedField(t, b, "web", "data", "version"))
}
