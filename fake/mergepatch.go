package fake

import (
	"maps"
	"reflect"
	"unicode/utf8"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// mergePatchObject applies a JSON merge patch (RFC 7386) to doc and returns the result, a new
// object, exactly as encoding doc, merging with github.com/evanphx/json-patch's MergePatch (the
// library the real server's patch handler uses) and decoding the result would, without the
// encoding and decoding. It returns false for what it leaves to that path: a patch that is
// not a JSON object, or a doc that does not walk (see canonicalObject).
//
// With share, the result shares with doc the values the patch leaves alone (doc is a stored
// object, which the store never mutates), and only its metadata map is the result's own, so
// the caller may set metadata fields but must not change anything deeper; without, the
// result is a copy of doc that shares nothing.
//
// The library's rules, which differ from the RFC's pseudo-code in two places: a null in the
// patch removes the key; a value set where the doc has none (or null) is set with the nulls
// of its objects removed, at any depth, arrays included (their null elements stay); an object
// merged into an object merges key by key; any other value replaces what the doc has, its
// nulls removed when the doc's value is not an object, and kept when it is.
func mergePatchObject(doc map[string]any, data []byte, share bool) (map[string]any, bool) {
	var p any
	if err := utiljson.Unmarshal(data, &p); err != nil {
		return nil, false
	}
	patch, ok := p.(map[string]any)
	if !ok || patch == nil {
		return nil, false
	}
	if share {
		out, ok := mergeShared(doc, patch, 0)
		if !ok {
			return nil, false
		}
		if m, isMap := out["metadata"].(map[string]any); isMap && sameMap(m, doc["metadata"]) {
			out["metadata"] = maps.Clone(m) // the caller's to set fields in
		}
		return out, true
	}
	out, ok := canonicalObject(doc)
	if !ok {
		return nil, false
	}
	mergeObject(out, patch)
	return out, true
}

// mergeShared returns the merge of patch into doc as a new map that shares doc's values the
// patch leaves alone, when they are what JSON would give back (else a canonical copy of
// them), and takes patch's values.
func mergeShared(doc, patch map[string]any, depth int) (map[string]any, bool) {
	if depth > maxCanonicalDepth {
		return nil, false
	}
	out := make(map[string]any, len(doc)+len(patch))
	for k, v := range doc {
		if _, patched := patch[k]; patched {
			continue
		}
		if !utf8.ValidString(k) {
			return nil, false
		}
		if !isCanonical(v, depth+1) {
			c, ok := canonicalValue(v, depth+1)
			if !ok {
				return nil, false
			}
			v = c
		}
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			continue // removed
		}
		cur, ok := doc[k]
		if !ok || cur == nil {
			out[k] = pruneNulls(v)
			continue
		}
		c, isMap := cur.(map[string]any)
		if !isMap {
			out[k] = pruneNulls(v)
			continue
		}
		p, isMap := v.(map[string]any)
		if !isMap {
			out[k] = v
			continue
		}
		merged, ok := mergeShared(c, p, depth+1)
		if !ok {
			return nil, false
		}
		out[k] = merged
	}
	return out, true
}

// sameMap reports whether v is the map m itself.
func sameMap(m map[string]any, v any) bool {
	o, ok := v.(map[string]any)
	return ok && o != nil && m != nil && reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(o).UnsafePointer()
}

// mergeObject merges patch into doc, in place; patch's values are taken, not copied.
func mergeObject(doc, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(doc, k)
			continue
		}
		cur, ok := doc[k]
		if !ok || cur == nil {
			doc[k] = pruneNulls(v)
			continue
		}
		doc[k] = mergeValue(cur, v)
	}
}

// mergeValue merges patch into the doc's value cur, which is not null.
func mergeValue(cur, patch any) any {
	c, ok := cur.(map[string]any)
	if !ok {
		return pruneNulls(patch)
	}
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	mergeObject(c, p)
	return c
}

// pruneNulls removes, in place, the null values of v's objects at any depth; null elements of
// arrays stay.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = pruneNulls(e)
		}
	case []any:
		for i, e := range x {
			if e != nil {
				x[i] = pruneNulls(e)
			}
		}
	}
	return v
}
