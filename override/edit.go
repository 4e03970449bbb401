package override

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"unsafe"

	"github.com/fedkit/fedkit/internal/jsonvalue"
)

// editor applies compiled operations directly to a decoded object (maps and slices), the fast
// path that replaces encoding the object to JSON, patching the bytes and decoding them again.
//
// In shared mode the object is read-only: before writing into a map or slice, the editor
// copies it (shallowly), links the copy into its already-copied parent and remembers it in
// owned, so each container is copied at most once per transaction. Only the containers on the
// edited paths are copied; everything else stays shared with the input. Discarding the new
// root undoes everything, which is what makes Apply atomic, and the input is never written,
// which is what lets Render patch a template without copying it.
//
// In private mode the object belongs to the caller and is edited in place.
type editor struct {
	shared bool
	// owned holds the containers this transaction created, by address (maps by their
	// header, slices by their backing array). Only compared, never dereferenced.
	owned map[unsafe.Pointer]struct{}
}

// spineDepth is how deep a path can go before the walk allocates; Kubernetes paths are
// rarely deeper than 10.
const spineDepth = 16

// ownRoot returns a root the editor may write into.
func (e *editor) ownRoot(root map[string]any) map[string]any {
	m, _ := e.ownMap(root)
	return m
}

// ownMap returns m itself when the editor may write into it, or a registered copy.
func (e *editor) ownMap(m map[string]any) (map[string]any, bool) {
	if m == nil {
		return e.register(make(map[string]any, 1)), true
	}
	if !e.shared {
		return m, false
	}
	if _, ok := e.owned[reflect.ValueOf(m).UnsafePointer()]; ok {
		return m, false
	}
	return e.register(maps.Clone(m)), true // copies the table as it is: no rehashing
}

// ownSlice returns s itself when the editor may write into its elements, or a registered copy.
func (e *editor) ownSlice(s []any) ([]any, bool) {
	if !e.shared || len(s) == 0 {
		return s, false
	}
	if _, ok := e.owned[unsafe.Pointer(unsafe.SliceData(s))]; ok {
		return s, false
	}
	c := make([]any, len(s))
	copy(c, s)
	e.registerSlice(c)
	return c, true
}

func (e *editor) register(m map[string]any) map[string]any {
	if e.shared {
		if e.owned == nil {
			e.owned = make(map[unsafe.Pointer]struct{}, 8)
		}
		e.owned[reflect.ValueOf(m).UnsafePointer()] = struct{}{}
	}
	return m
}

func (e *editor) registerSlice(s []any) {
	if e.shared && len(s) > 0 {
		if e.owned == nil {
			e.owned = make(map[unsafe.Pointer]struct{}, 8)
		}
		e.owned[unsafe.Pointer(unsafe.SliceData(s))] = struct{}{}
	}
}

// apply runs one operation on root, which the editor owns. On error the caller discards
// root (shared mode) or the whole object (private mode).
func (e *editor) apply(root map[string]any, o *op) error {
	err := e.applyOp(root, o)
	if err != nil {
		return &PathError{Path: o.path, Op: o.kind.String(), Err: err}
	}
	return nil
}

func (e *editor) applyOp(root map[string]any, o *op) error {
	// Walk to the container holding the target: spine[i+1] is the child of spine[i] at
	// tokens[i]; idx[i] is that child's index when spine[i] is an array. The walk only
	// reads, so a path that does not exist fails before anything is copied. Both buffers
	// live on the stack for paths up to spineDepth deep.
	var spineBuf [spineDepth]any
	var idxBuf [spineDepth]int
	spine := append(spineBuf[:0], any(root))
	idx := idxBuf[:0]
	n := len(o.tokens)
	for i := 0; i < n-1; i++ {
		tok := o.tokens[i]
		var next any
		switch c := spine[i].(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return fmt.Errorf("%w: %s does not exist", ErrPathNotFound, prefix(o.path, i+1))
			}
			next = v
			idx = append(idx, -1)
		case []any:
			j, err := arrayIndex(tok, len(c), false)
			if err != nil {
				return fmt.Errorf("at %s: %w", prefix(o.path, i+1), err)
			}
			next = c[j]
			idx = append(idx, j)
		}
		switch next.(type) {
		case map[string]any, []any:
		default:
			return fmt.Errorf("%w: %s is %s, not an object or array", ErrPathNotFound, prefix(o.path, i+1), describe(next))
		}
		spine = append(spine, next)
	}
	last := o.tokens[n-1]
	// test only reads: nothing is copied for it.
	if o.kind == opTest {
		return testValue(spine[n-1], last, o.value)
	}

	// Make the spine writable from the top; an array whose length changes is replaced
	// whole, so it need not be copied first.
	resized := false
	if _, isArray := spine[n-1].([]any); isArray && (o.kind == opAdd || o.kind == opRemove) {
		resized = true
	}
	for i := 1; i < n; i++ {
		if i == n-1 && resized {
			break
		}
		var c any
		changed := false
		switch x := spine[i].(type) {
		case map[string]any:
			c, changed = e.ownMap(x)
		case []any:
			c, changed = e.ownSlice(x)
		}
		if changed {
			link(spine[i-1], o.tokens[i-1], idx[i-1], c)
			spine[i] = c
		}
	}

	switch c := spine[n-1].(type) {
	case map[string]any:
		return editMap(c, last, o)
	case []any:
		s, err := e.editSlice(c, last, o)
		if err != nil {
			return err
		}
		if n == 1 { // unreachable: the root is an object
			return fmt.Errorf("%w: the root is not an array", ErrInvalidIndex)
		}
		link(spine[n-2], o.tokens[n-2], idx[n-2], s)
	}
	return nil
}

// link stores child in parent (a map at key, or an array at index i). The parent is owned
// by the editor: the spine is made writable from the root down.
func link(parent any, key string, i int, child any) {
	switch p := parent.(type) {
	case map[string]any:
		p[key] = child
	case []any:
		p[i] = child
	}
}

// editMap runs add, replace or remove on member key of m, which the editor owns. RFC 6902:
// add creates the member or replaces its value (4.1); replace and remove need the member
// to exist (4.3, 4.2). Values are copied in, so the object never shares memory with the
// Patch, which may be applied to many objects.
func editMap(m map[string]any, key string, o *op) error {
	_, exists := m[key]
	switch o.kind {
	case opAdd:
		m[key] = deepCopyValue(o.value)
	case opReplace:
		if !exists {
			return fmt.Errorf("%w: replace needs an existing member %q", ErrPathNotFound, key)
		}
		m[key] = deepCopyValue(o.value)
	case opRemove:
		if !exists {
			return fmt.Errorf("%w: no member %q to remove", ErrPathNotFound, key)
		}
		delete(m, key)
	}
	return nil
}

// editSlice runs add, replace or remove on element tok of s. RFC 6902: add inserts before
// the index, and at the length or "-" appends (4.1); replace and remove need an existing
// index. Replace writes into s (owned by then); add and remove return a new array,
// registered as owned, because shifting elements in place would write into an array the
// input may share.
func (e *editor) editSlice(s []any, tok string, o *op) ([]any, error) {
	switch o.kind {
	case opAdd:
		i, err := arrayIndex(tok, len(s), true)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(s)+1)
		copy(out, s[:i])
		out[i] = deepCopyValue(o.value)
		copy(out[i+1:], s[i:])
		e.registerSlice(out)
		return out, nil
	case opReplace:
		i, err := arrayIndex(tok, len(s), false)
		if err != nil {
			return nil, err
		}
		s[i] = deepCopyValue(o.value)
		return s, nil
	default: // opRemove
		i, err := arrayIndex(tok, len(s), false)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(s)-1)
		copy(out, s[:i])
		copy(out[i:], s[i+1:])
		e.registerSlice(out)
		return out, nil
	}
}

// testValue compares the value at tok in container c with want (RFC 6902 4.6). An absent
// member fails the test even when want is null: there is no value at the location to be
// equal to it (json-patch v5 lets that pass; see errTestAbsent).
func testValue(c any, tok string, want any) error {
	var got any
	switch x := c.(type) {
	case map[string]any:
		v, ok := x[tok]
		if !ok {
			return errTestAbsent
		}
		got = v
	case []any:
		i, err := arrayIndex(tok, len(x), false)
		if err != nil {
			return err
		}
		got = x[i]
	}
	if !jsonvalue.Equal(got, want) {
		return fmt.Errorf("%w: found %s", ErrTestFailed, describe(got))
	}
	return nil
}

// prefix returns the first k reference tokens of pointer p, still escaped.
func prefix(p string, k int) string {
	n := 0
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			n++
			if n == k {
				return p[:i]
			}
		}
	}
	return p
}

// describe names a value's JSON type for error messages; short scalars are shown.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	case string:
		if len(x) > 40 {
			return fmt.Sprintf("the string %q...", x[:40])
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the bool %t", x)
	}
	if b, ok := appendNumber(nil, v); ok {
		return "the number " + string(b)
	}
	return strings.TrimPrefix(fmt.Sprintf("a %T", v), "a ")
}
