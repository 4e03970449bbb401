package jsonvalue

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
)

// Equal reports whether a and b are the same JSON value: what comparing them after a round
// trip through JSON reports, without the round trip. Numbers compare by value whatever their Go
// type (int64 after a decode, int or float64 from code), as the API server stores them; a nil
// map or slice is null, not {} or []. Values of Go types other than the ones JSON decodes to
// compare by their encoding.
//
// Sync's status write compares what it computed with what it read, for every object, every
// pass: this walk costs a fraction of two JSON round trips and allocates nothing. Override's
// test operation and retained fields use it too, so both agree on every value.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || x == nil || y == nil {
			break
		}
		if len(x) != len(y) {
			return false
		}
		if reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
			return true // an entry kept as it was read
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || x == nil || y == nil {
			break
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		if y, ok := b.(string); ok {
			return x == y
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	case nil:
		if b == nil {
			return true
		}
	}
	if n, ok := jsonNumber(a); ok {
		if m, ok := jsonNumber(b); ok {
			return n == m
		}
	}
	return sameEncoding(a, b)
}

// number is a JSON number as a decode gives it: an int64 when it is an integer that fits,
// a float64 otherwise.
type number struct {
	isInt bool
	i     int64
	f     float64
}

// jsonNumber returns v as the number a JSON round trip makes of it, for the Go types numbers
// have in unstructured objects.
func jsonNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int64:
		return number{isInt: true, i: x}, true
	case int:
		return number{isInt: true, i: int64(x)}, true
	case int32:
		return number{isInt: true, i: int64(x)}, true
	case float64:
		// JSON writes an integral float64 without a fraction, and reading it back gives an
		// int64 when it fits.
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return number{isInt: true, i: int64(x)}, true
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return number{}, false // not JSON: compared by encoding, which fails
		}
		return number{f: x}, true
	}
	return number{}, false
}

// sameEncoding compares two values by their JSON encoding; values that do not encode are
// never equal.
func sameEncoding(a, b any) bool {
	x, err := json.Marshal(a)
	if err != nil {
		return false
	}
	y, err := json.Marshal(b)
	if err != nil {
		return false
	}
	return bytes.Equal(x, y)
}

// EqualJSON reports whether two JSON documents hold the same value: what a server stores
// comes back re-encoded, not byte for byte as written (a ControllerRevision's data, say). A
// document that does not decode equals only its own bytes.
func EqualJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return Equal(x, y)
}
