package plan

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonvalue"
)

// The federation owns the fields its render sets, and nothing else: API servers default
// fields the template leaves out (a Deployment's strategy, a container's
// terminationMessagePath), member controllers add annotations and labels, admission webhooks
// add containers, and status belongs to the member. So "does the member object still look as
// the federation wrote it" is a subset test: every field of the rendered object must be in
// the live object with the same value. Fields only the live object has are ignored.
//
// Values are compared as the member's server stores them (see Schema): a quantity by
// its value (cpu: 1 is "1", 0.5 is "500m"), an empty value the type drops as absent, a field
// the type does not have as pruned when the live object lacks it, and a
// list that strategic merge patch merges by a key (containers by name, ports by
// containerPort, env by name, volumes by name) element by element by key, so an element only
// the live object has (a webhook's sidecar) is not drift while a changed field of one the
// federation renders is. Other lists are compared element by element and must have the same
// length, because an element added or removed (an arg, a toleration) is a change to what the
// federation said. Kinds without a schema (custom resources) are compared as they are.
//
// Removing a field from the template is not drift but a new desired state: the desired-state
// hash changes and the object is rewritten whole, so the subset test does not need to see it.

// ignoredFields are parts of the rendered object the comparison skips: server-managed
// metadata, the member's status, and the revision annotation (a new revision that renders the
// same object does not rewrite it; see override's hash).
func ignoredMeta(key string) bool {
	switch key {
	case "resourceVersion", "uid", "generation", "creationTimestamp", "managedFields",
		"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers",
		"ownerReferences":
		return true
	}
	return false
}

// ownedDiff returns the JSON pointer paths where live differs from desired in the fields
// desired sets, sorted by the walk order (map keys are not sorted: callers use the list as a
// set or for messages, capped at maxDiffPaths). fs is the member type's schema, nil when
// unknown. A list element is named by its index in desired. A nil result means live holds
// everything desired says.
func ownedDiff(desired, live map[string]any, fs *Schema) []string {
	return ownedDiffN(desired, live, fs, maxDiffPaths)
}

// Dropped returns the owned paths where stored, a member object as its API server stored a
// write of desired, does not hold what desired says: the fields its type does not have,
// which that server never keeps. A driver remembers them (Verified.Dropped): a difference
// there is not drift. s is the member type's schema.
func Dropped(desired, stored *unstructured.Unstructured, s *Schema) []string {
	return ownedDiff(desired.Object, stored.Object, s)
}

// ownedDiffN is ownedDiff collecting at most limit paths.
func ownedDiffN(desired, live map[string]any, fs *Schema, limit int) []string {
	d := differ{limit: limit}
	for k, dv := range desired {
		f := fs.field(k)
		switch k {
		case "status":
			continue
		case "metadata":
			d.push(k)
			d.meta(dv, live[k], f.valueSchema())
			d.pop()
			continue
		}
		d.push(k)
		if lv, ok := live[k]; ok {
			d.value(dv, lv, f)
		} else if !absentAsStored(dv, f) && !pruned(fs, k) {
			d.add()
		}
		d.pop()
	}
	return d.paths
}

// pruned reports whether a child k that the live object lacks is one a real server prunes:
// the type has a schema, and no field k (a typo, a field of a newer Kubernetes). A member
// that has such a field keeps its value, which is compared.
func pruned(s *Schema, k string) bool {
	return s != nil && s.fields != nil && s.fields[k] == nil
}

// absentAsStored reports whether a desired value v of field f is one the server does not
// store: null, or an empty value the type drops.
func absentAsStored(v any, f *fieldInfo) bool {
	return v == nil || f != nil && f.omitEmpty && jsonvalue.Empty(v)
}

// nullAsStored reports whether a live null is how the server stores the desired value v of
// field f: an empty value the type drops.
func nullAsStored(v, live any, f *fieldInfo) bool {
	return live == nil && f != nil && f.omitEmpty && jsonvalue.Empty(v)
}

// maxDiffPaths bounds how many paths a diff collects: enough to explain, cheap on a big object
// that differs everywhere.
const maxDiffPaths = 16

// differ walks a desired value and a live one side by side. The path to where it is stands as
// a stack of unescaped tokens, joined into a JSON pointer only for a difference: a walk that
// finds everything in place (what most checks find) allocates nothing. The first tokens are
// held in the differ itself, the rest (a path deeper than most objects go) in deep.
type differ struct {
	paths []string
	limit int
	depth int
	toks  [16]string
	deep  []string
}

func (d *differ) push(tok string) {
	if d.depth < len(d.toks) {
		d.toks[d.depth] = tok
	} else {
		d.deep = append(d.deep, tok)
	}
	d.depth++
}

func (d *differ) pop() {
	d.depth--
	if d.depth >= len(d.toks) {
		d.deep = d.deep[:len(d.deep)-1]
	}
}

// add records the current path as a difference.
func (d *differ) add() {
	if len(d.paths) >= d.limit {
		return
	}
	var b strings.Builder
	for i := range d.depth {
		tok := ""
		if i < len(d.toks) {
			tok = d.toks[i]
		} else {
			tok = d.deep[i-len(d.toks)]
		}
		b.WriteByte('/')
		b.WriteString(escape(tok))
	}
	d.paths = append(d.paths, b.String())
}

// addChild records the current path's child tok as a difference.
func (d *differ) addChild(tok string) {
	d.push(tok)
	d.add()
	d.pop()
}

func (d *differ) full() bool { return len(d.paths) >= d.limit }

// meta compares metadata: labels and annotations as subsets (the revision annotation left
// out), the other fields the render sets (name, namespace) by value, the server's fields not
// at all. fs is ObjectMeta's schema, nil when unknown.
func (d *differ) meta(dv, lv any, fs *Schema) {
	dm, _ := dv.(map[string]any)
	lm, _ := lv.(map[string]any)
	for k, v := range dm {
		if ignoredMeta(k) {
			continue
		}
		d.push(k)
		switch k {
		case "labels", "annotations":
			want, _ := v.(map[string]any)
			have, _ := lm[k].(map[string]any)
			for key, val := range want {
				if k == "annotations" && key == federation.RevisionAnnotation {
					continue
				}
				if hv, ok := have[key]; !ok || !equalScalar(val, hv) {
					d.addChild(key)
				}
			}
		default:
			f := fs.field(k)
			if hv, ok := lm[k]; ok {
				d.value(v, hv, f)
			} else if !absentAsStored(v, f) {
				d.add()
			}
		}
		d.pop()
	}
}

// value compares one desired value of field f (nil when unknown) with the live one at the
// current path.
func (d *differ) value(dv, lv any, f *fieldInfo) {
	if d.full() {
		return
	}
	s := f.valueSchema()
	if nullAsStored(dv, lv, f) {
		return
	}
	switch want := dv.(type) {
	case map[string]any:
		have, ok := lv.(map[string]any)
		if !ok {
			d.add()
			return
		}
		for k, v := range want {
			cf := s.field(k)
			hv, ok := have[k]
			if !ok {
				if !absentAsStored(v, cf) && !pruned(s, k) {
					d.addChild(k)
				}
				continue
			}
			d.push(k)
			d.value(v, hv, cf)
			d.pop()
		}
	case []any:
		have, ok := lv.([]any)
		if !ok {
			d.add()
			return
		}
		if f != nil && f.mergeKey != "" && d.byKey(want, have, f.mergeKey, s.item()) {
			return
		}
		if len(have) != len(want) {
			d.add()
			return
		}
		item := s.item()
		for i := range want {
			d.push(strconv.Itoa(i))
			d.value(want[i], have[i], item)
			d.pop()
		}
	default:
		if s != nil && s.quantity {
			if !equalQuantityValue(dv, lv) {
				d.add()
			}
			return
		}
		if !equalScalar(dv, lv) {
			d.add()
		}
	}
}

// byKey compares a list merged by key (see Schema) element by element by key: each
// desired element must be in have, where the element with the same key holds what it says;
// elements only have has are not drift. It reports false, comparing nothing, when a desired
// element has no scalar key: the list is then compared by position.
func (d *differ) byKey(want, have []any, key string, item *fieldInfo) bool {
	for _, w := range want {
		wm, ok := w.(map[string]any)
		if !ok || !isScalar(wm[key]) {
			return false
		}
	}
	for i, w := range want {
		j := indexByKey(have, key, w.(map[string]any)[key])
		if j < 0 {
			d.addChild(strconv.Itoa(i))
			continue
		}
		d.push(strconv.Itoa(i))
		d.value(w, have[j], item)
		d.pop()
	}
	return true
}

// indexByKey returns the index of the first element of list whose key is v, -1 when none is.
func indexByKey(list []any, key string, v any) int {
	for j, e := range list {
		if m, ok := e.(map[string]any); ok {
			if hv, ok := m[key]; ok && equalScalar(v, hv) {
				return j
			}
		}
	}
	return -1
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, int64, int, float64, bool:
		return true
	}
	return false
}

// equalScalar compares JSON scalars the way the API server stores them: numbers by value
// whatever their Go type (int64 after a decode, float64 from some encoders), and strings
// that are resource quantities by quantity ("0.5" is stored as "500m", "1000m" as "1"), so a
// template written in another notation does not look like drift forever.
func equalScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		return x == y || equalQuantity(x, y)
	case int64:
		return equalNumber(float64(x), b, x)
	case int:
		return equalNumber(float64(x), b, int64(x))
	case float64:
		if y, ok := b.(float64); ok {
			return x == y
		}
		if y, ok := b.(int64); ok {
			return x == float64(y)
		}
		return false
	case nil:
		return b == nil
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func equalNumber(f float64, b any, i int64) bool {
	switch y := b.(type) {
	case int64:
		return i == y
	case int:
		return i == int64(y)
	case float64:
		return f == y
	}
	return false
}

// equalQuantity reports whether two different strings are the same resource quantity. Only
// strings that start like a number are parsed, so ordinary strings cost nothing.
func equalQuantity(a, b string) bool {
	if !numeric(a) || !numeric(b) {
		return false
	}
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return false
	}
	qb, err := resource.ParseQuantity(b)
	if err != nil {
		return false
	}
	return qa.Cmp(qb) == 0
}

// equalQuantityValue compares the values of a quantity field: a number in the template (cpu:
// 1, 0.5) is the quantity the server stores as a string ("1", "500m").
func equalQuantityValue(a, b any) bool {
	if equalScalar(a, b) {
		return true
	}
	x, ok := quantityText(a)
	if !ok {
		return false
	}
	y, ok := quantityText(b)
	return ok && equalQuantity(x, y)
}

// quantityText returns a quantity's value as text: a string as it is, a number as JSON
// writes it.
func quantityText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-'
}

// escape escapes a JSON pointer token (RFC 6901).
func escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
