package fake

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A real API server drops the fields of a built-in object its Go type does not have (a typo,
// a field of an older version) and, with its default field validation ("Warn"), answers the
// write with a Warning for each: `unknown field "spec.template.spec.containers[0].imagePullPolicyy"`.
// checkDecodes finds them (federation.UnknownFields) and dropFields removes them; Create,
// Update and Patch hand the warnings to the request's handler (federation.HandleWarning).

// step is one step of a field path: a key, or a list index (index >= 0).
type step struct {
	key   string
	index int
}

// parsePath splits a strict decoding path ("spec.containers[0].x") into steps; false when it
// is not one.
func parsePath(path string) ([]step, bool) {
	var out []step
	for part := range strings.SplitSeq(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" {
			return nil, false
		}
		out = append(out, step{key: key, index: -1})
		for rest != "" {
			n, tail, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(n)
			if !ok || err != nil || i < 0 {
				return nil, false
			}
			out = append(out, step{index: i})
			rest = strings.TrimPrefix(tail, "[")
		}
	}
	return out, len(out) > 0
}

// dropFields removes the fields at paths from obj. obj's top level is changed in place; below
// it every map and list on the way is copied, since an UpdateStatus shares the rest with the
// caller's object (see storedForm). A path that does not lead to a field is skipped.
func dropFields(obj map[string]any, paths []string) {
	for _, p := range paths {
		if steps, ok := parsePath(p); ok {
			withoutField(obj, steps, true)
		}
	}
}

// withoutField returns v without the field at steps, and whether there was one. top says v
// may be changed in place.
func withoutField(v any, steps []step, top bool) (any, bool) {
	s := steps[0]
	switch x := v.(type) {
	case map[string]any:
		child, ok := x[s.key]
		if s.index >= 0 || !ok {
			return v, false
		}
		m := x
		if !top {
			m = maps.Clone(x)
		}
		if len(steps) == 1 {
			delete(m, s.key)
			return m, true
		}
		c, ok := withoutField(child, steps[1:], false)
		if !ok {
			return v, false
		}
		m[s.key] = c
		return m, true
	case []any:
		if s.index < 0 || s.index >= len(x) || len(steps) == 1 {
			return v, false
		}
		c, ok := withoutField(x[s.index], steps[1:], false)
		if !ok {
			return v, false
		}
		l := slices.Clone(x)
		l[s.index] = c
		return l, true
	}
	return v, false
}
