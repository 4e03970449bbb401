package override

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fedkit/fedkit/federation"
)

// Values inside unstructured objects are the JSON types as the API machinery decodes them:
// map[string]any, []any, string, int64, float64, bool and nil (json.Number and
// other integer and float kinds are tolerated). These helpers never panic on anything else:
// unknown kinds are copied by value and compared by their JSON encoding (jsonvalue.Equal).

// deepCopyValue returns a copy of v that shares no map or slice with it. Scalars are returned
// as they are (they are immutable). Unlike runtime.DeepCopyJSONValue it does not panic on a
// Go type JSON has no form for: such a value is copied by assignment, and the operation
// that meets it (a hash, an encoding) reports it as an error instead.
func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopyMap(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		return v
	}
}

// deepCopyMap is deepCopyValue for a map; a nil map stays nil.
func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = deepCopyValue(e)
	}
	return out
}

// appendNumber appends the JSON encoding of a number as encoding/json writes it; ok is false
// when v is not a number.
func appendNumber(dst []byte, v any) (out []byte, ok bool) {
	switch n := v.(type) {
	case int64:
		return strconv.AppendInt(dst, n, 10), true
	case int:
		return strconv.AppendInt(dst, int64(n), 10), true
	case int32:
		return strconv.AppendInt(dst, int64(n), 10), true
	case uint64:
		return strconv.AppendUint(dst, n, 10), true
	case float64:
		return appendFloat(dst, n, 64), true
	case float32:
		return appendFloat(dst, float64(n), 32), true
	case json.Number:
		return append(dst, n...), true
	}
	return dst, false
}

// appendFloat formats like encoding/json: 'f' between 1e-6 and 1e21, 'e' outside, with
// "e-07" shortened to "e-7".
func appendFloat(dst []byte, f float64, bits int) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		n := len(dst) - start
		if n >= 4 && dst[len(dst)-4] == 'e' && dst[len(dst)-3] == '-' && dst[len(dst)-2] == '0' {
			dst[len(dst)-2] = dst[len(dst)-1]
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}

// decodeValue decodes an operation's JSON value as the API machinery does (integers as
// int64, other numbers as float64). Most override values are a number, a plain string, a
// bool or null; those are decoded directly, which is several times cheaper than a
// json.Decoder. Everything else (objects, arrays, strings with escapes, numbers that are
// not plain integers) goes through federation.RawValue.Decode.
func decodeValue(raw []byte) (any, error) {
	b := bytes.TrimSpace(raw)
	switch {
	case len(b) == 0:
	case string(b) == "null":
		return nil, nil
	case string(b) == "true":
		return true, nil
	case string(b) == "false":
		return false, nil
	case b[0] == '"' && len(b) >= 2 && b[len(b)-1] == '"':
		s := b[1 : len(b)-1]
		plain := true
		for _, c := range s {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				plain = false
				break
			}
		}
		if plain {
			return string(s), nil
		}
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		if isPlainInt(b) {
			if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
				return n, nil
			}
		}
	}
	return (&federation.RawValue{Raw: raw}).Decode()
}

// isPlainInt reports whether b is a JSON integer: an optional minus, then 0 or digits
// without a leading zero.
func isPlainInt(b []byte) bool {
	if b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 1 && b[0] == '0' {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
