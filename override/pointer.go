package override

import (
	"fmt"
	"strings"

	"github.com/fedkit/fedkit/federation"
)

// parsePointer splits an RFC 6901 JSON pointer into its decoded reference tokens. It accepts
// what federation.CheckJSONPointer accepts, minus two things no Kubernetes object can need:
// the empty pointer (the whole object, which would replace its identity too) and empty
// reference tokens ("/a//b", "/a/"): no field, label key or map key is the empty string, and
// such a token is almost always a typo.
func parsePointer(p string) ([]string, error) {
	if err := federation.CheckJSONPointer(p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPath, err)
	}
	// Count first so that tokens is allocated once.
	n := strings.Count(p, "/")
	tokens := make([]string, 0, n)
	rest := p[1:]
	for {
		i := strings.IndexByte(rest, '/')
		tok := rest
		if i >= 0 {
			tok = rest[:i]
		}
		if tok == "" {
			return nil, fmt.Errorf("%w: empty reference token in %q", ErrInvalidPath, p)
		}
		tokens = append(tokens, unescapeToken(tok))
		if i < 0 {
			return tokens, nil
		}
		rest = rest[i+1:]
	}
}

// unescapeToken decodes "~1" to "/" and "~0" to "~", in that order (RFC 6901 section 4).
// The common case, a token without "~", returns the token without allocating.
func unescapeToken(t string) string {
	if strings.IndexByte(t, '~') < 0 {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

// EscapeToken escapes a map key or field name for use as one JSON pointer reference token:
// "~" becomes "~0" and "/" becomes "~1". Label and annotation keys such as
// "app.kubernetes.io/name" need it: /metadata/labels/app.kubernetes.io~1name.
func EscapeToken(s string) string {
	if strings.IndexAny(s, "~/") < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Pointer joins field names and keys into a JSON pointer, escaping each: Pointer("metadata",
// "labels", "app.kubernetes.io/name") is "/metadata/labels/app.kubernetes.io~1name".
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
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
