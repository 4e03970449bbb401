package override

import (
	"fmt"

	"github.com/fedkit/fedkit/internal/jsonpointer"
)

// parsePointer splits a JSON pointer into its decoded reference tokens, with the rules of
// package internal/jsonpointer, which validation in package federation applies too: no
// empty pointer and no empty reference token, which no Kubernetes object can need.
func parsePointer(p string) ([]string, error) {
	tokens, err := jsonpointer.Split(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPath, err)
	}
	return tokens, nil
}

// Pointer joins field names and keys into a JSON pointer, escaping each ("~" as "~0", "/"
// as "~1"): Pointer("metadata", "labels", "app.kubernetes.io/name") is
// "/metadata/labels/app.kubernetes.io~1name". It is how to build the Path of an
// operation that addresses a label or annotation key, whose "/" would otherwise split it.
func Pointer(tokens ...string) string {
	return jsonpointer.Join(tokens...)
}

// arrayIndex parses a reference token used on an array of length n. RFC 6901 allows "0" or a
// decimal number without a leading zero; "-" (one past the end) is allowed only when
// appendOK (for add). The result is in [0, n) for existing elements, or n for "-" and for
// add at the end.
func arrayIndex(tok string, n int, appendOK bool) (int, error) {
	if tok == "-" {
		if appendOK {
			return n, nil
		}
		return 0, fmt.Errorf("%w: %q (one past the end) only works with add", ErrInvalidIndex, tok)
	}
	if tok == "" || len(tok) > 18 { // 18 digits cannot overflow int64 and no array is that long
		return 0, fmt.Errorf("%w: %q", ErrInvalidIndex, tok)
	}
	if tok[0] == '0' && len(tok) > 1 {
		return 0, fmt.Errorf("%w: %q", errNonCanonicalIndex, tok)
	}
	i := 0
	for k := 0; k < len(tok); k++ {
		c := tok[k]
		if c < '0' || c > '9' {
			if c == '+' || c == '-' {
				return 0, fmt.Errorf("%w: %q", errNonCanonicalIndex, tok)
			}
			return 0, fmt.Errorf("%w: %q is not a number", ErrInvalidIndex, tok)
		}
		i = i*10 + int(c-'0')
	}
	limit := n - 1
	if appendOK {
		limit = n
	}
	if i > limit {
		return 0, fmt.Errorf("%w: %d is out of range (length %d)", ErrInvalidIndex, i, n)
	}
	return i, nil
}
