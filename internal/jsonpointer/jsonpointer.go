package jsonpointer

import (
	"errors"
	"strings"
)

// The reasons Check gives. They read as the detail of a field error ("must ...").
var (
	errEmpty      = errors.New("must be a JSON pointer such as /spec/replicas, not empty (the whole object cannot be overridden)")
	errNoSlash    = errors.New("must be a JSON pointer starting with \"/\"")
	errBadEscape  = errors.New("\"~\" must be escaped as \"~0\" (and \"/\" as \"~1\")")
	errEmptyToken = errors.New("must not have an empty reference token (\"//\" or a trailing \"/\"): no field or key of a Kubernetes object is empty")
)

// Check returns an error unless p is a JSON pointer fedkit accepts: it starts with "/", "~"
// appears only as "~0" or "~1", and no reference token is empty.
func Check(p string) error {
	switch {
	case p == "":
		return errEmpty
	case p[0] != '/':
		return errNoSlash
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '~':
			if i+1 >= len(p) || (p[i+1] != '0' && p[i+1] != '1') {
				return errBadEscape
			}
		case '/':
			if i+1 == len(p) || p[i+1] == '/' {
				return errEmptyToken
			}
		}
	}
	return nil
}

// Split checks p (see Check) and returns its reference tokens, decoded ("~1" is "/", "~0"
// is "~"): Split("/metadata/labels/app.kubernetes.io~1name") is [metadata labels
// app.kubernetes.io/name].
func Split(p string) ([]string, error) {
	if err := Check(p); err != nil {
		return nil, err
	}
	tokens := make([]string, 0, strings.Count(p, "/")) // allocated once
	rest := p[1:]
	for {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return append(tokens, Unescape(rest)), nil
		}
		tokens = append(tokens, Unescape(rest[:i]))
		rest = rest[i+1:]
	}
}

// Unescape decodes one reference token: "~1" to "/" and "~0" to "~", in that order (RFC 6901
// section 4). A token without "~", the common case, is returned without allocating.
func Unescape(t string) string {
	if strings.IndexByte(t, '~') < 0 {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

// Escape encodes a field name or map key as one reference token: "~" becomes "~0" and "/"
// becomes "~1". Label and annotation keys such as "app.kubernetes.io/name" need it.
func Escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Join escapes each token and joins them into a pointer: Join("metadata", "labels",
// "app.kubernetes.io/name") is "/metadata/labels/app.kubernetes.io~1name". No tokens give
// "".
func Join(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}

// IsIdentity reports whether p addresses a Kubernetes object's identity (its name,
// namespace, generateName, kind or apiVersion), something inside one of them, or
// /metadata, their parent. An override may not write there: the federated object and its
// TypeConfig decide which object is written, and an override redirecting the write would
// touch an object the federation does not own.
func IsIdentity(p string) bool {
	if p == "/metadata" {
		return true
	}
	for _, id := range [...]string{"/metadata/name", "/metadata/namespace", "/metadata/generateName", "/kind", "/apiVersion"} {
		if p == id || strings.HasPrefix(p, id+"/") {
			return true
		}
	}
	return false
}
