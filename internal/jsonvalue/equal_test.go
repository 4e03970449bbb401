package jsonvalue

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
)

// TestEqual checks Equal against what it stands for: comparing both values after a round trip
// through JSON. Sync's status writes and override's test operation and retained fields both
// call Equal, so these rows are what both say (before they shared it, override called a nil
// map equal to {} and sync did not).
func TestEqual(t *testing.T) {
	shared := map[string]any{"name": "a", "revision": int64(1)}
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"same scalars", map[string]any{"a": "x", "b": true, "c": nil}, map[string]any{"a": "x", "b": true, "c": nil}, true},
		{"int64 and int", map[string]any{"g": int64(3)}, map[string]any{"g": 3}, true},
		{"int64 and integral float64", map[string]any{"g": int64(3)}, map[string]any{"g": float64(3)}, true},
		{"int64 and fractional float64", map[string]any{"g": int64(3)}, map[string]any{"g": 3.5}, false},
		{"fractional floats", []any{2.5}, []any{2.5}, true},
		{"different ints", map[string]any{"g": int64(3)}, map[string]any{"g": int64(4)}, false},
		{"int64 beyond float64 precision", []any{int64(1<<53 + 1)}, []any{float64(1 << 53)}, false},
		{"number and string", []any{int64(1)}, []any{"1"}, false},
		{"missing key", map[string]any{"a": "x"}, map[string]any{"b": "x"}, false},
		{"extra key", map[string]any{"a": "x"}, map[string]any{"a": "x", "b": "y"}, false},
		{"nil map and null", map[string]any{"a": map[string]any(nil)}, map[string]any{"a": nil}, true},
		{"nil map and empty map", map[string]any{"a": map[string]any(nil)}, map[string]any{"a": map[string]any{}}, false},
		{"nil slice and empty slice", map[string]any{"a": []any(nil)}, map[string]any{"a": []any{}}, false},
		{"typed slice and its JSON", map[string]any{"a": []string{"x", "y"}}, map[string]any{"a": []any{"x", "y"}}, true},
		{"typed map and its JSON", map[string]any{"a": map[string]int64{"x": 1}}, map[string]any{"a": map[string]any{"x": int64(1)}}, true},
		{"list order", []any{"x", "y"}, []any{"y", "x"}, false},
		{"list length", []any{"x"}, []any{"x", "x"}, false},
		{"the same map", map[string]any{"c": []any{shared}}, map[string]any{"c": []any{shared}}, true},
		{"nested difference", map[string]any{"c": []any{map[string]any{"n": "a", "r": int64(1)}}}, map[string]any{"c": []any{map[string]any{"n": "a", "r": int64(2)}}}, false},
		{"negative zero", []any{math.Copysign(0, -1)}, []any{int64(0)}, true},
		{"NaN", []any{math.NaN()}, []any{math.NaN()}, false},
		{"top-level nil map and empty map", map[string]any(nil), map[string]any{}, false},
		{"top-level nil slice and empty slice", []any(nil), []any{}, false},
		{"top-level nil map and null", map[string]any(nil), nil, true},
		{"empty maps", map[string]any{}, map[string]any{}, true},
		{"json.Number and int64", []any{json.Number("7")}, []any{int64(7)}, true},
		{"json.Number and float64", []any{json.Number("0.5")}, []any{0.5}, true},
		{"uint64 and int64", []any{uint64(9)}, []any{int64(9)}, true},
		{"float32 and float64", []any{float32(0.5)}, []any{0.5}, true},
		{"bool and string", []any{true}, []any{"true"}, false},
		{"func never equal", []any{func() {}}, []any{func() {}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Equal(tt.a, tt.b))
			require.Equal(t, tt.want, Equal(tt.b, tt.a), "symmetric")
			if ra, rb := roundTrip(tt.a), roundTrip(tt.b); ra != nil && rb != nil {
				require.Equal(t, tt.want, equality.Semantic.DeepEqual(ra, rb), "what a round trip through JSON says")
			}
		})
	}
}

// roundTrip is v through JSON, numbers as the API machinery decodes them; nil when v does not
// encode.
func roundTrip(v any) map[string]any {
	m := map[string]any{"v": v}
	if _, err := json.Marshal(m); err != nil {
		return nil
	}
	data, _ := json.Marshal(m)
	var out map[string]any
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		return nil
	}
	return numbers(out).(map[string]any)
}

// numbers turns json.Numbers into int64 (or float64), as the API machinery decodes them.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// TestEqualJSON: two encodings of one value are equal (key order, spacing, a number's
// notation); another value, or a document that does not decode, is not.
func TestEqualJSON(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[true]}`, `{"b": [true], "a": 1.0}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":`, `{"a":`, true},
		{`{"a":`, `{"a":1}`, false},
	} {
		if got := EqualJSON([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("EqualJSON(%s, %s) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
