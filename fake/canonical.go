package fake

import (
	"math"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/internal/jsonvalue"
)

// Every object a client sends goes through JSON before the fake keeps it, as it would on its
// way to a real server: numbers become int64 or float64, and values JSON cannot hold are a
// BadRequest. Encoding and decoding each object costs more than the rest of a write, so the
// fake walks the object instead and builds what the decoder would have built, for the values
// an unstructured object normally holds; anything else (a typed value, a json.Number, an
// invalid UTF-8 string, a float32, an integral float64 JSON would print inexactly, an object
// nested deeper than any real one) makes the walk give up, and the object takes the real
// round trip. Either way the result is the same, as canonical_test.go checks.

// maxCanonicalDepth bounds the walk; deeper objects (or cyclic ones, which JSON refuses) take
// the round trip, which reports them as it always did.
const maxCanonicalDepth = 200

// maxExactFloat bounds the integral float64s whose JSON text is their exact value: beyond
// 2^53 encoding/json prints the shortest text that reads back as the same float64, whose
// digits past the 16th are zeros, and the decoder then makes of it a different int64.
const maxExactFloat = 1 << 53

// canonicalObject returns a deep copy of m as decoding its JSON encoding gives it, or false
// when m holds something only the round trip handles exactly.
func canonicalObject(m map[string]any) (map[string]any, bool) {
	v, ok := canonicalValue(m, 0)
	if !ok {
		return nil, false
	}
	out, _ := v.(map[string]any) // nil for a nil m, which the round trip decodes as null too
	return out, true
}

// canonicalValue returns v as decoding its JSON encoding gives it: maps and slices copied
// (nil ones become null), integers int64, integral float64s int64, strings shared.
func canonicalValue(v any, depth int) (any, bool) {
	if depth > maxCanonicalDepth {
		return nil, false
	}
	switch x := v.(type) {
	case nil:
		return nil, true
	// The scalars that are canonical already are returned as v: boxing them again would
	// allocate (a string's header, a float64) for every value of every stored object.
	case string:
		return v, utf8.ValidString(x) // JSON replaces invalid bytes
	case bool:
		return v, true
	case int64:
		return v, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return nil, false // JSON refuses it: the round trip reports the error
		case x != math.Trunc(x):
			return v, true // printed as the shortest text that reads back as x
		case math.Abs(x) < maxExactFloat:
			return int64(x), true // printed without a fraction: decoded as an integer
		}
		return nil, false
	case map[string]any:
		if x == nil {
			return nil, true
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, false
			}
			c, ok := canonicalValue(e, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if x == nil {
			return nil, true
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := canonicalValue(e, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// isCanonical reports whether v is already what decoding its JSON encoding gives (see
// canonicalValue): a copy of it would be equal to it, Go types included, so it may be shared
// as it is. It allocates nothing.
func isCanonical(v any, depth int) bool {
	if depth > maxCanonicalDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return utf8.ValidString(x)
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0) && x != math.Trunc(x)
	case map[string]any:
		if x == nil {
			return false // decoded as null, not as a nil map
		}
		for k, e := range x {
			if !utf8.ValidString(k) || !isCanonical(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		if x == nil {
			return false
		}
		for _, e := range x {
			if !isCanonical(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// normalizeStatusWrite is normalize for an UpdateStatus, of which the store keeps the status
// only: the other fields are checked as ever (a value JSON cannot hold is a BadRequest) but
// shared with obj rather than copied when they are already what JSON would give back. The
// result's top level, metadata and status are its own; the rest must only be read.
func normalizeStatusWrite(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj == nil || obj.Object == nil {
		return normalize(obj)
	}
	out := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		if !utf8.ValidString(k) {
			return normalize(obj)
		}
		if k == "metadata" || k == "status" || !isCanonical(v, 1) {
			c, ok := canonicalValue(v, 1)
			if !ok {
				return normalize(obj)
			}
			v = c
		}
		out[k] = v
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// storedForm makes obj, a built-in object that decoded into its Go type, what a real server
// stores, given encoded, that Go value encoded again: resource quantities in their canonical
// form (cpu: 1 is "1", 0.5 is "500m", 1000m is "1"), and fields the type omits when empty
// ("", false, 0, {}, []) gone. Fields the encoding adds (an empty struct, a null time) are not
// added. Fields the type does not have are not removed here; storedForm reports whether obj
// has a value the encoding lacks (extra), which only such a field has, and checkDecodes then
// drops them by their paths. obj's top level is changed in place; below it, only copies are
// changed, since an UpdateStatus shares the rest with the caller's object (see
// normalizeStatusWrite).
func storedForm(obj, encoded map[string]any) (extra bool) {
	for k, v := range obj {
		e, ok := encoded[k]
		if !ok {
			if jsonvalue.Empty(v) {
				delete(obj, k)
			} else {
				extra = true
			}
			continue
		}
		if s, changed := storedValue(v, e, 1, &extra); changed {
			obj[k] = s
		}
	}
	return extra
}

// storedValue returns v as stored (see storedForm) and whether that differs from v, whose
// encoding is e. v itself is never changed. It sets *extra when v holds a value e lacks.
func storedValue(v, e any, depth int, extra *bool) (any, bool) {
	if depth > maxCanonicalDepth {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		em, ok := e.(map[string]any)
		if !ok {
			return v, false
		}
		var out map[string]any // a copy, made at the first change
		for k, c := range x {
			ec, ok := em[k]
			var s any
			drop, changed := false, false
			if !ok {
				drop = jsonvalue.Empty(c)
				*extra = *extra || !drop
			} else {
				s, changed = storedValue(c, ec, depth+1, extra)
			}
			if !drop && !changed {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(x))
				for k2, c2 := range x {
					out[k2] = c2
				}
			}
			if drop {
				delete(out, k)
			} else {
				out[k] = s
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		el, ok := e.([]any)
		if !ok || len(el) != len(x) {
			return v, false
		}
		var out []any
		for i, c := range x {
			s, changed := storedValue(c, el[i], depth+1, extra)
			if !changed {
				continue
			}
			if out == nil {
				out = append([]any(nil), x...)
			}
			out[i] = s
		}
		if out == nil {
			return v, false
		}
		return out, true
	case string, int64, float64, bool:
		switch e.(type) {
		case string, int64, float64, bool:
		default:
			return v, false
		}
		if c, ok := canonicalValue(e, 0); ok && c != v {
			return c, true // a quantity in its canonical form
		}
	}
	return v, false
}
