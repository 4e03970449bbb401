package fake

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// roundTrip is what canonicalObject stands for: m encoded as JSON and decoded again.
func roundTrip(t *testing.T, m map[string]any) (map[string]any, bool) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	u, err := decodeObject(data)
	if err != nil {
		return nil, false
	}
	return u.Object, true
}

// TestCanonicalObjectIsTheJSONRoundTrip: wherever the walk answers, it answers what the round
// trip does, Go types included (an int64 is not a float64 to the store's comparisons).
func TestCanonicalObjectIsTheJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		value  any
		walked bool // false: the walk gives up and the object takes the round trip
	}{
		{"string", "web", true},
		{"escaped characters", "<a href=\"x\">\u2028\t\x00</a>", true},
		{"invalid UTF-8", "a\xffb", false},
		{"bool", true, true},
		{"null", nil, true},
		{"int64", int64(-7), true},
		{"int", 42, true},
		{"int32", int32(3), true},
		{"integral float64", float64(3), true},
		{"negative zero", math.Copysign(0, -1), true},
		{"fractional float64", 2.5, true},
		{"tiny float64", 1e-7, true},
		{"huge float64", 1.5e300, false},
		{"integral float64 at 2^53", float64(1 << 53), false},
		{"integral float64 beyond int64", 1e20, false},
		{"NaN", math.NaN(), false},
		{"infinity", math.Inf(1), false},
		{"float32", float32(0.1), false},
		{"json.Number", json.Number("12"), false},
		{"typed slice", []string{"a"}, false},
		{"typed map", map[string]string{"a": "b"}, false},
		{"nil map", map[string]any(nil), true},
		{"empty map", map[string]any{}, true},
		{"nil slice", []any(nil), true},
		{"empty slice", []any{}, true},
		{"nested", map[string]any{"a": []any{map[string]any{"b": int64(1), "c": 1.0, "d": nil}}, "e": []any{nil, "x"}}, true},
		{"invalid UTF-8 key", map[string]any{"a\xff": "b"}, false},
		{"too deep", deep(maxCanonicalDepth + 5), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": tt.value}
			got, ok := canonicalObject(m)
			require.Equal(t, tt.walked, ok)
			if ok {
				require.Equal(t, cmp.Equal(m, got), isCanonical(m, 0), "isCanonical: a copy would be equal")
			}
			if !ok {
				return
			}
			want, ok := roundTrip(t, m)
			require.True(t, ok, "the walk answered for a value JSON refuses")
			require.Empty(t, cmp.Diff(want, got), "(-round trip +walk)")
		})
	}
}

// TestCanonicalObjectCopies: the result shares no map or slice with the input.
func TestCanonicalObjectCopies(t *testing.T) {
	in := map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}
	got, ok := canonicalObject(in)
	require.True(t, ok)
	got["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"] = int64(81)
	require.Equal(t, int64(80), in["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"])
}

// TestCanonicalObjectRandom compares the walk with the round trip on random objects.
func TestCanonicalObjectRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	walked := 0
	for i := range 2000 {
		m := map[string]any{}
		for range 1 + r.IntN(6) {
			m[randomKey(r)] = randomValue(r, 0)
		}
		want, okJSON := roundTrip(t, m)
		got, ok := canonicalObject(m)
		if !ok {
			continue
		}
		walked++
		require.True(t, okJSON, "object %d: the walk answered for a value JSON refuses", i)
		require.Empty(t, cmp.Diff(want, got), "object %d (-round trip +walk)", i)
		require.Equal(t, cmp.Equal(m, got), isCanonical(m, 0), "object %d: isCanonical", i)
		require.True(t, isCanonical(got, 0), "object %d: a walked copy is canonical", i)
	}
	require.Greater(t, walked, 1000, "most random objects are walked")
}

func deep(n int) any {
	var v any = "leaf"
	for range n {
		v = map[string]any{"x": v}
	}
	return v
}

func randomKey(r *rand.Rand) string {
	keys := []string{"a", "name", "métadonnée", "x-y", "", "\u2028"}
	return keys[r.IntN(len(keys))] + strings.Repeat("k", r.IntN(3))
}

func randomValue(r *rand.Rand, depth int) any {
	n := 12
	if depth > 4 {
		n = 9 // scalars only
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return r.Int64() - r.Int64()
	case 3:
		return int64(r.IntN(100))
	case 4:
		return float64(r.IntN(1000)) / 8 // integral or not
	case 5:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case 6:
		return float64(r.Int64N(1<<60)) * float64(r.IntN(2)*2-1)
	case 7:
		return r.IntN(1000) - 500
	case 8:
		return randomKey(r)
	case 9, 10:
		m := map[string]any{}
		for range r.IntN(4) {
			m[randomKey(r)] = randomValue(r, depth+1)
		}
		if r.IntN(10) == 0 {
			return map[string]any(nil)
		}
		return m
	}
	s := make([]any, r.IntN(4))
	for i := range s {
		s[i] = randomValue(r, depth+1)
	}
	if r.IntN(10) == 0 {
		return []any(nil)
	}
	return s
}

// TestNormalizeStatusWrite: what an UpdateStatus keeps of the object is what normalize gives,
// its metadata and status are copies, and what it shares with the object is canonical.
func TestNormalizeStatusWrite(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 500 {
		m := map[string]any{
			"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": randomValue(r, 4)}},
			"spec":     randomValue(r, 1),
			"status":   map[string]any{"v": randomValue(r, 2)},
		}
		u := &unstructured.Unstructured{Object: m}
		want, werr := normalize(u)
		got, err := normalizeStatusWrite(u)
		if werr != nil {
			require.Error(t, err, "case %d", i)
			continue
		}
		require.NoError(t, err, "case %d", i)
		require.Empty(t, cmp.Diff(want.Object, got.Object), "case %d (-normalize +status write)", i)
		for _, k := range []string{"metadata", "status"} {
			require.False(t, sameMap(got.Object[k].(map[string]any), m[k]), "case %d: %s is a copy", i, k)
		}
	}
}

// TestCheckDecodesStoresAsTheServer: a built-in object that decodes is made what a real server
// stores (quantities canonical, empty omitted fields dropped; internal/conformance checks the
// same against one), and the values it shares with the caller's object are not changed.
func TestCheckDecodesStoresAsTheServer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in, want  map[string]any
		untouched bool // the input must come out as it went in
	}{
		{"quantities", map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": "q"},
			"spec": map[string]any{"hard": map[string]any{"cpu": int64(1), "memory": "0.5Gi", "pods": "1000m"}}},
			map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": "q"},
				"spec": map[string]any{"hard": map[string]any{"cpu": "1", "memory": "512Mi", "pods": "1"}}}, false},
		{"empty fields", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "labels": map[string]any{}},
			"data": map[string]any{}, "immutable": false},
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "immutable": false}, false},
		{"a pointer's zero value stays", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{"replicas": int64(0)}},
			map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
				"spec": map[string]any{"replicas": int64(0)}}, true},
		{"custom resources are stored as sent", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"cpu": int64(1), "empty": ""}},
			map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
				"spec": map[string]any{"cpu": int64(1), "empty": ""}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := normalize(&unstructured.Unstructured{Object: tc.in})
			require.NoError(t, err)
			before := in.DeepCopy()
			// The top level is the store's own; below it, values may be shared with the caller.
			shared := map[string]any{}
			for k, v := range in.Object {
				shared[k] = v
			}
			obj := &unstructured.Unstructured{Object: shared}
			_, err = checkDecodes(obj)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, obj.Object); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, in.Object); diff != "" {
				t.Errorf("the shared values were changed (-before +after):\n%s", diff)
			}
			if tc.untouched {
				if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
					t.Errorf("changed (-before +after):\n%s", diff)
				}
			}
		})
	}
}

// TestCanonicalValueKeepsScalars: a stored object's strings, booleans and numbers are the
// values written, not boxed again: re-boxing a string cost every stored object 16 bytes per
// string field (48 MB at 1,000,000 member objects).
func TestCanonicalValueKeepsScalars(t *testing.T) {
	for _, v := range []any{"text", true, int64(7), 1.5, nil} {
		var got any
		allocs := testing.AllocsPerRun(100, func() { got, _ = canonicalValue(v, 0) })
		if allocs != 0 {
			t.Errorf("canonicalValue(%#v): %v allocations, want 0", v, allocs)
		}
		if got != v {
			t.Errorf("canonicalValue(%#v) = %#v", v, got)
		}
	}
}
