package override

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHashDistinguishes(t *testing.T) {
	values := []map[string]interface{}{
		{},
		{"a": nil},
		{"a": false},
		{"a": true},
		{"a": int64(1)},
		{"a": "1"},
		{"a": 1.5},
		{"a": int64(-1)},
		{"a": int64(1 << 60)},
		{"a": []interface{}{}},
		{"a": map[string]interface{}{}},
		{"a": []interface{}{"x", "y"}},
		{"a": []interface{}{"y", "x"}},
		{"a": []interface{}{[]interface{}{"x"}, "y"}},
		{"a": map[string]interface{}{"b": int64(1)}},
		{"a": map[string]interface{}{"c": int64(1)}},
		{"b": map[string]interface{}{"a": int64(1)}},
		{"a": int64(1), "b": int64(2)},
		{"a": int64(2), "b": int64(1)},
		{"ab": ""},
		{"a": "b"},
		{"a": "12345678"},
		{"a": "123456789"},
		{"metadata": map[string]interface{}{"annotations": map[string]interface{}{"x": "1"}}},
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
	same := [][2]map[string]interface{}{
		{{"a": int64(3)}, {"a": float64(3)}},
		{{"a": int64(1e15)}, {"a": float64(1e15)}}, // both encode as 1000000000000000
		{{"metadata": map[string]interface{}{"annotations": map[string]interface{}{"federation.k8s.io/revision": "1", "federation.k8s.io/desired-hash": "x"}}},
			{"metadata": map[string]interface{}{"annotations": map[string]interface{}{}}}},
	}
	for _, pair := range same {
		a, err := desiredHash(pair[0])
		require.NoError(t, err)
		b, err := desiredHash(pair[1])
		require.NoError(t, err)
		require.Equal(t, a, b, "%v vs %v", pair[0], pair[1])
	}
	// Only the root's metadata.annotations are special.
	a, _ := desiredHash(map[string]interface{}{"spec": map[string]interface{}{"annotations": map[string]interface{}{"federation.k8s.io/revision": "1"}}})
	b, _ := desiredHash(map[string]interface{}{"spec": map[string]interface{}{"annotations": map[string]interface{}{}}})
	require.NotEqual(t, a, b)
	_, err := desiredHash(map[string]interface{}{"a": struct{}{}})
	require.ErrorIs(t, err, ErrInvalidValue)
}
