package fake

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// libraryMerge is what mergePatchObject stands for: the doc encoded, merged by the library
// and decoded.
func libraryMerge(t *testing.T, doc map[string]any, patch []byte) (map[string]any, bool) {
	t.Helper()
	original, err := json.Marshal(doc)
	require.NoError(t, err)
	merged, err := jsonpatch.MergePatch(original, patch)
	if err != nil {
		return nil, false
	}
	u, err := decodeObject(merged)
	if err != nil {
		return nil, false
	}
	return u.Object, true
}

// TestMergePatchObjectIsTheLibrary: the merge on maps gives what the library gives through
// JSON, in the library's corner cases too.
func TestMergePatchObjectIsTheLibrary(t *testing.T) {
	doc := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"a": "1"}, "finalizers": []any{"x"}},
		"spec":     map[string]any{"replicas": int64(2), "list": []any{int64(1), map[string]any{"k": "v"}}, "ratio": 2.5, "f": float64(3)},
		"status":   nil,
	}
	tests := []struct {
		name   string
		patch  string
		merged bool // false: mergePatchObject leaves it to the library
	}{
		{"empty", `{}`, true},
		{"set a label", `{"metadata":{"labels":{"b":"2"}}}`, true},
		{"remove a label", `{"metadata":{"labels":{"a":null}}}`, true},
		{"remove a missing key", `{"metadata":{"annotations":null}}`, true},
		{"replace a list", `{"metadata":{"finalizers":["x","y"]}}`, true},
		{"new object with nulls", `{"spec":{"new":{"a":null,"b":{"c":null,"d":1}}}}`, true},
		{"new list with nulls", `{"spec":{"new":[null,{"a":null,"b":1}]}}`, true},
		{"object over a scalar", `{"spec":{"replicas":{"a":null,"b":1}}}`, true},
		{"list over a list", `{"spec":{"list":[{"a":null}]}}`, true},
		{"list over an object", `{"metadata":{"labels":[{"a":null}]}}`, true},
		{"scalar over an object", `{"metadata":{"labels":"none"}}`, true},
		{"value over null", `{"status":{"a":null,"b":[null]}}`, true},
		{"numbers", `{"spec":{"replicas":3,"ratio":1.0,"big":12345678901234567890}}`, true},
		{"duplicate keys", `{"spec":{"replicas":3},"spec":{"replicas":4}}`, true},
		{"resourceVersion", `{"metadata":{"resourceVersion":"7","finalizers":["x","sync"],"annotations":{"r":"1"}}}`, true},
		{"null patch", `null`, false},
		{"list patch", `[{"a":1}]`, false},
		{"scalar patch", `3`, false},
	}
	for _, tt := range tests {
		for _, share := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/share=%v", tt.name, share), func(t *testing.T) {
				got, ok := mergePatchObject(doc, []byte(tt.patch), share)
				require.Equal(t, tt.merged, ok)
				if !ok {
					return
				}
				want, ok := libraryMerge(t, doc, []byte(tt.patch))
				require.True(t, ok)
				require.Empty(t, cmp.Diff(want, got), "(-library +maps)")
				if m, ok := got["metadata"].(map[string]any); ok {
					require.False(t, sameMap(m, doc["metadata"]), "the result's metadata is its own")
				}
			})
		}
	}
	require.Equal(t, map[string]any{"a": "1"}, doc["metadata"].(map[string]any)["labels"], "the doc is not changed")
}

// TestMergePatchObjectShares: with share, what the patch leaves alone is the doc's own value
// when it is canonical, and a canonical copy when it is not.
func TestMergePatchObjectShares(t *testing.T) {
	spec := map[string]any{"replicas": int64(2)}
	doc := map[string]any{"metadata": map[string]any{"name": "web"}, "spec": spec, "status": map[string]any{"n": 3}}
	got, ok := mergePatchObject(doc, []byte(`{"metadata":{"labels":{"a":"1"}}}`), true)
	require.True(t, ok)
	require.True(t, sameMap(spec, got["spec"]), "an untouched canonical value is shared")
	require.Equal(t, map[string]any{"n": int64(3)}, got["status"], "an int is made an int64, as JSON does")
	require.Equal(t, map[string]any{"n": 3}, doc["status"], "the doc is not changed")
}

// TestMergePatchObjectRandom compares the merge on maps with the library on random documents
// and patches.
func TestMergePatchObjectRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	merged := 0
	for i := range 3000 {
		doc := map[string]any{}
		for range 1 + r.IntN(5) {
			doc[randomKey(r)] = randomValue(r, 0)
		}
		if _, ok := canonicalObject(doc); !ok {
			continue
		}
		p := map[string]any{}
		for range 1 + r.IntN(4) {
			p[randomKey(r)] = randomValue(r, 1)
		}
		patch, err := json.Marshal(p)
		if err != nil {
			continue
		}
		got, ok := mergePatchObject(doc, patch, i%2 == 0)
		if !ok {
			continue
		}
		merged++
		want, ok := libraryMerge(t, doc, patch)
		require.True(t, ok, "case %d", i)
		require.Empty(t, cmp.Diff(want, got), "case %d: patch %s (-library +maps)", i, patch)
	}
	require.Greater(t, merged, 1000, "most random patches are merged on maps")
}
