package override

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestHashDistinguishes(t *testing.T) {
	values := []map[string]any{
		{},
		{"a": nil},
		{"a": false},
		{"a": true},
		{"a": int64(1)},
		{"a": "1"},
		{"a": 1.5},
		{"a": int64(-1)},
		{"a": int64(1 << 60)},
		{"a": []any{}},
		{"a": map[string]any{}},
		{"a": []any{"x", "y"}},
		{"a": []any{"y", "x"}},
		{"a": []any{[]any{"x"}, "y"}},
		{"a": map[string]any{"b": int64(1)}},
		{"a": map[string]any{"c": int64(1)}},
		{"b": map[string]any{"a": int64(1)}},
		{"a": int64(1), "b": int64(2)},
		{"a": int64(2), "b": int64(1)},
		{"ab": ""},
		{"a": "b"},
		{"a": "12345678"},
		{"a": "123456789"},
		{"metadata": map[string]any{"annotations": map[string]any{"x": "1"}}},
	}
	seen := map[string]int{}
	for i, v := range values {
		h, err := desiredHash(v)
		require.NoError(t, err)
		if j, dup := seen[h]; dup {
			t.Errorf("values[%d] %v and values[%d] %v hash alike", i, v, j, values[j])
		}
		seen[h] = i
	}
}

func TestHashEquivalences(t *testing.T) {
	same := [][2]map[string]any{
		{{"a": int64(3)}, {"a": float64(3)}},
		{{"a": int64(1e15)}, {"a": float64(1e15)}}, // both encode as 1000000000000000
		{{"metadata": map[string]any{"annotations": map[string]any{"federation.k8s.io/revision": "1", "federation.k8s.io/desired-hash": "x"}}},
			{"metadata": map[string]any{"annotations": map[string]any{}}}},
	}
	for _, pair := range same {
		a, err := desiredHash(pair[0])
		require.NoError(t, err)
		b, err := desiredHash(pair[1])
		require.NoError(t, err)
		require.Equal(t, a, b, "%v vs %v", pair[0], pair[1])
	}
	// Only the root's metadata.annotations are special.
	a, _ := desiredHash(map[string]any{"spec": map[string]any{"annotations": map[string]any{"federation.k8s.io/revision": "1"}}})
	b, _ := desiredHash(map[string]any{"spec": map[string]any{"annotations": map[string]any{}}})
	require.NotEqual(t, a, b)
	_, err := desiredHash(map[string]any{"a": struct{}{}})
	require.ErrorIs(t, err, ErrInvalidValue)
}

// BenchmarkDesiredHash is the hash of the benchmark Deployment rendered for one cluster
// (the object D of a render), alone.
func BenchmarkDesiredHash(b *testing.B) {
	data, err := os.ReadFile("testdata/bench-deployment.yaml")
	require.NoError(b, err)
	var d map[string]any
	require.NoError(b, yaml.Unmarshal(data, &d))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := desiredHash(d); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHashKnownAnswer pins the scheme: the hash is SHA-256 of the canonical encoding that
// hash.go documents, written out here by hand. If this test fails, the hash of an unchanged
// object changed: bump hashScheme (and its history) before changing the expected value.
func TestHashKnownAnswer(t *testing.T) {
	obj := map[string]any{
		"kind": "ConfigMap",
		"data": map[string]any{"b": "x", "a": nil},
		"n":    []any{int64(3), 1.5, true, false},
		"metadata": map[string]any{"annotations": map[string]any{
			"federation.k8s.io/revision": "7", "federation.k8s.io/desired-hash": "old", "k": "v"}},
	}
	// Members in key order: data, kind, metadata, n.
	enc := "o\x04" +
		"\x04data" + "o\x02" + "\x01a" + "n" + "\x01b" + "s\x01x" +
		"\x04kind" + "s\x09ConfigMap" +
		"\x08metadata" + "o\x01" + "\x0bannotations" + "o\x01" + "\x01k" + "s\x01v" +
		"\x01n" + "a\x04" + "d\x013" + "d\x031.5" + "t" + "f"
	sum := sha256.Sum256([]byte(enc))
	want := "v2:" + hex.EncodeToString(sum[:16])
	got, err := desiredHash(obj)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, "v2:7209d5b01ffae33b08ff7bc835c9f63a", got, "the hash of an unchanged object changed: bump hashScheme")
}

// TestHashIgnoresMapOrder: Go randomizes map iteration; the hash must not see it.
func TestHashIgnoresMapOrder(t *testing.T) {
	m := map[string]any{}
	for i := 0; i < 40; i++ { // more members than the sort's stack array holds
		m[strconv.Itoa(i)] = map[string]any{"x": int64(i), "y": strconv.Itoa(i * i)}
	}
	first, err := desiredHash(m)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		got, err := desiredHash(m)
		require.NoError(t, err)
		require.Equal(t, first, got)
	}
}

// TestEncodingCache: the encodings RenderMembers reuses by identity give the same bytes as
// encoding afresh, for objects sharing some containers with the template and not others.
func TestEncodingCache(t *testing.T) {
	template := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"a": "b"}, "annotations": map[string]any{"federation.k8s.io/revision": "1"}},
		"spec": map[string]any{
			"list":  []any{"x", map[string]any{"k": int64(1)}},
			"inner": map[string]any{"deep": []any{int64(1), int64(2)}},
		},
	}
	c, err := newEncodingCache(template)
	require.NoError(t, err)
	spec := template["spec"].(map[string]any)
	list := spec["list"].([]any)
	derived := []map[string]any{
		template,
		// A copied root and spec, sharing list and inner.
		{"metadata": template["metadata"], "spec": map[string]any{"list": list, "inner": spec["inner"], "new": true}},
		// A shorter slice over the same array is another container.
		{"spec": map[string]any{"list": list[:1]}},
		// A container moved under another key keeps its encoding.
		{"moved": spec["inner"], "metadata": map[string]any{"annotations": template["metadata"].(map[string]any)["labels"]}},
	}
	for i, d := range derived {
		want, err := encoder{}.appendObject(nil, d, levelRoot)
		require.NoError(t, err)
		got, err := encoder{cache: c}.appendObject(nil, d, levelRoot)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "derived[%d]", i)
	}
}
