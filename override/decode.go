package override

import (
	"bytes"
	"strconv"

	"github.com/fedkit/fedkit/federation"
)

// decodeValue decodes an operation's JSON value as the API machinery does (integers as
// int64, other numbers as float64). Most override values are a number, a plain string, a
// bool or null; those are decoded directly, which is several times cheaper than a
// json.Decoder. Everything else (objects, arrays, strings with escapes, numbers that are
// not plain integers) goes through federation.RawValue.Decode.
func decodeValue(raw []byte) (interface{}, error) {
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
