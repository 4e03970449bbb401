package fake

import (
	"context"
	"fmt"
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

// TestInternNeverChangesSharedMaps: interning an object whose parts are shared with stored
// ones copies the path to a replaced map instead of changing it.
func TestInternNeverChangesSharedMaps(t *testing.T) {
	in := &interner{}
	held := map[string]any{"a": "1"}
	in.intern(&unstructured.Unstructured{Object: map[string]any{"x": held}})

	shared := map[string]any{"inner": map[string]any{"a": "1"}, "list": []any{map[string]any{"a": "1"}, "s"}}
	before := fmt.Sprint(shared)
	innerBefore, elemBefore := shared["inner"], shared["list"].([]any)[0]
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": shared}}
	in.intern(obj)

	spec := obj.Object["spec"].(map[string]any)
	require.True(t, sameValue(held, spec["inner"]), "equal flat map not replaced by the held one")
	require.True(t, sameValue(held, spec["list"].([]any)[0]), "equal flat map in a list not replaced by the held one")
	require.False(t, sameValue(shared, spec), "a map on the path to a replaced one was changed in place")
	require.True(t, sameValue(innerBefore, shared["inner"]) && sameValue(elemBefore, shared["list"].([]any)[0]), "the shared map was changed")
	require.Equal(t, before, fmt.Sprint(shared))
}

// TestInternKeepsTypesApart: maps are shared only when equal, Go types included.
func TestInternKeepsTypesApart(t *testing.T) {
	tests := []struct {
		name string
		a, b map[string]any
		same bool
	}{
		{name: "equal strings", a: map[string]any{"k": "v", "l": "w"}, b: map[string]any{"l": "w", "k": "v"}, same: true},
		{name: "equal mixed", a: map[string]any{"n": int64(1), "f": 1.5, "b": true, "z": nil}, b: map[string]any{"n": int64(1), "f": 1.5, "b": true, "z": nil}, same: true},
		{name: "int and string", a: map[string]any{"k": int64(1)}, b: map[string]any{"k": "1"}},
		{name: "bool and string", a: map[string]any{"k": true}, b: map[string]any{"k": "true"}},
		{name: "null and empty string", a: map[string]any{"k": nil}, b: map[string]any{"k": ""}},
		{name: "int and float", a: map[string]any{"k": int64(2)}, b: map[string]any{"k": 2.5}},
		{name: "key boundary", a: map[string]any{"ab": "c"}, b: map[string]any{"a": "bc"}},
		{name: "missing key", a: map[string]any{"k": "v"}, b: map[string]any{"k": "v", "l": "w"}},
		{name: "empty and not", a: map[string]any{}, b: map[string]any{"k": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &interner{}
			a := &unstructured.Unstructured{Object: map[string]any{"x": tt.a}}
			b := &unstructured.Unstructured{Object: map[string]any{"x": tt.b}}
			in.intern(a)
			in.intern(b)
			require.Equal(t, tt.same, sameValue(a.Object["x"], b.Object["x"]))
			require.Equal(t, tt.b, b.Object["x"], "the value changed")
		})
	}
}

// TestInternTableBounded: the table forgets what it holds past its bound, so it keeps alive
// only a bounded amount of what the stores no longer refer to.
func TestInternTableBounded(t *testing.T) {
	in := &interner{}
	for i := range maxInternTable + 10 {
		in.intern(&unstructured.Unstructured{Object: map[string]any{"x": map[string]any{"i": int64(i)}}})
	}
	require.LessOrEqual(t, len(in.table), maxInternTable)
	require.Equal(t, 10, len(in.table), "the table starts again once full")

	big := map[string]any{}
	for i := range maxInternEntries + 1 {
		big[fmt.Sprint(i)] = "v"
	}
	in.intern(&unstructured.Unstructured{Object: map[string]any{"x": big}})
	require.Equal(t, 10, len(in.table), "a map beyond maxInternEntries is not interned")
}
