package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FieldChange is one field the federation owns whose value in the member object is not the
// rendered one: what an update would change there.
type FieldChange struct {
	// Path is the field's JSON pointer (RFC 6901), e.g. /spec/replicas or
	// /metadata/labels/app.
	Path string `json:"path"`
	// Live is the member object's value, nil when InLive is false.
	Live any `json:"live,omitempty"`
	// InLive reports whether the member object has the field at all.
	InLive bool `json:"inLive"`
	// Desired is the rendered value.
	Desired any `json:"desired"`
}

// String returns the change on one line: "/spec/replicas: 9 -> 4", with values as JSON and
// "(absent)" for a field the member object does not have.
func (c FieldChange) String() string {
	live := "(absent)"
	if c.InLive {
		live = compactJSON(c.Live)
	}
	return fmt.Sprintf("%s: %s -> %s", c.Path, live, compactJSON(c.Desired))
}

// OwnedDiff returns the fields the render desired sets that the live member object does not
// hold with the same value, sorted by path: the comparison [Decide] makes to detect drift (the
// same code), with every difference and its values, for previews and messages. Fields only
// the live object has (defaulted by the API server, added by member controllers, status) are
// not differences, nor are elements only the live object has in a list merged by key
// (containers by name: a webhook's sidecar); another list is one field when its length
// differs. Values compare as the member's server stores them (a quantity by value, an empty
// value the type drops as absent). The revision annotation and
// server-managed metadata are ignored, as Plan ignores them.
//
// An update that Plan decides because the desired-state hash changed may show no field
// here: a field removed from the template is not in the render, and the update rewrites the
// object whole. A nil live object (a create) gives the render's top-level fields, as absent.
func OwnedDiff(desired, live *unstructured.Unstructured) []FieldChange {
	if desired == nil {
		return nil
	}
	var liveObj map[string]any
	if live != nil {
		liveObj = live.Object
	}
	fields := SchemaFor(desired.GroupVersionKind())
	paths := ownedDiffN(desired.Object, liveObj, fields, maxInt)
	slices.Sort(paths)
	out := make([]FieldChange, 0, len(paths))
	for _, p := range paths {
		c := FieldChange{Path: p}
		c.Desired, c.Live, c.InLive = lookupBoth(desired.Object, liveObj, fields, p)
		out = append(out, c)
	}
	return out
}

// lookupBoth resolves a path of ownedDiff in desired and in live. A list merged by key is
// indexed by desired's position: live's element is the one with the same key.
func lookupBoth(desired, live map[string]any, fs *Schema, pointer string) (d, l any, inLive bool) {
	d, _ = lookup(desired, pointer)
	if live == nil {
		return d, nil, false
	}
	var dc, lc any = desired, live
	var f *fieldInfo
	s := fs
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch v := dc.(type) {
		case map[string]any:
			f = s.field(tok)
			dc = v[tok]
			lm, ok := lc.(map[string]any)
			if !ok {
				return d, nil, false
			}
			if lc, ok = lm[tok]; !ok {
				return d, nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return d, nil, false
			}
			dc = v[i]
			ll, ok := lc.([]any)
			if !ok {
				return d, nil, false
			}
			j := i
			if w, ok := dc.(map[string]any); ok && f != nil && f.mergeKey != "" && isScalar(w[f.mergeKey]) {
				j = indexByKey(ll, f.mergeKey, w[f.mergeKey])
			}
			if j < 0 || j >= len(ll) {
				return d, nil, false
			}
			lc = ll[j]
			f = s.item()
		default:
			return d, nil, false
		}
		s = f.valueSchema()
	}
	return d, lc, true
}

const maxInt = int(^uint(0) >> 1)

// lookup resolves a JSON pointer in an unstructured object.
func lookup(obj map[string]any, pointer string) (any, bool) {
	var cur any = obj
	if obj == nil {
		return nil, false
	}
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
