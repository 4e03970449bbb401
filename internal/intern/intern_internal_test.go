package intern

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func sameValue(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestInternNeverChangesSharedMaps: interning an object whose parts are shared with stored
// ones copies the path to a replaced map instead of changing it.
func TestInternNeverChangesSharedMaps(t *testing.T) {
	in := &Table{}
	held := map[string]any{"a": "1"}
	in.Intern(&unstructured.Unstructured{Object: map[string]any{"x": held}})

	shared := map[string]any{"inner": map[string]any{"a": "1"}, "list": []any{map[string]any{"a": "1"}, "s"}}
	before := fmt.Sprint(shared)
	innerBefore, elemBefore := shared["inner"], shared["list"].([]any)[0]
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": shared}}
	in.Intern(obj)

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
			in := &Table{}
			a := &unstructured.Unstructured{Object: map[string]any{"x": tt.a}}
			b := &unstructured.Unstructured{Object: map[string]any{"x": tt.b}}
			in.Intern(a)
			in.Intern(b)
			require.Equal(t, tt.same, sameValue(a.Object["x"], b.Object["x"]))
			require.Equal(t, tt.b, b.Object["x"], "the value changed")
		})
	}
}

// TestInternTableBounded: the table forgets what it holds past its bound, so it keeps alive
// only a bounded amount of what the stores no longer refer to.
func TestInternTableBounded(t *testing.T) {
	in := &Table{}
	for i := range maxInternTable + 10 {
		in.Intern(&unstructured.Unstructured{Object: map[string]any{"x": map[string]any{"i": int64(i)}}})
	}
	require.LessOrEqual(t, len(in.table), maxInternTable)
	require.Equal(t, 10, len(in.table), "the table starts again once full")

	big := map[string]any{}
	for i := range maxInternEntries + 1 {
		big[fmt.Sprint(i)] = "v"
	}
	in.Intern(&unstructured.Unstructured{Object: map[string]any{"x": big}})
	require.Equal(t, 10, len(in.table), "a map beyond maxInternEntries is not interned")
}
