package fake

import (
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// mergePatchObject applies a JSON merge patch (RFC 7386) to a copy of doc and returns it,
// exactly as encoding doc, merging with github.com/evanphx/json-patch's MergePatch (the
// library the real server's patch handler uses) and decoding the result would, without the
// encoding and decoding. It returns false for what it leaves to that path: a patch that is
// not a JSON object, or a doc that does not walk (see canonicalObject).
//
// The library's rules, which differ from the RFC's pseudo-code in two places: a null in the
// patch removes the key; a value set where the doc has none (or null) is set with the nulls
// of its objects removed, at any depth, arrays included (their null elements stay); an object
// merged into an object merges key by key; any other value replaces what the doc has, its
// nulls removed when the doc's value is not an object, and kept when it is.
func mergePatchObject(doc map[string]any, data []byte) (map[string]any, bool) {
	var p any
	if err := utiljson.Unmarshal(data, &p); err != nil {
		return nil, false
	}
	patch, ok := p.(map[string]any)
	if !ok || patch == nil {
		return nil, false
	}
	out, ok := canonicalObject(doc)
	if !ok {
		return nil, false
	}
	mergeObject(out, patch)
	return out, true
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
