package override

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonpointer"
)

// opKind is one of the four supported RFC 6902 operations.
type opKind uint8

const (
	opAdd opKind = iota + 1
	opRemove
	opReplace
	opTest
)

// String returns the RFC 6902 name.
func (k opKind) String() string {
	switch k {
	case opAdd:
		return federation.OpAdd
	case opRemove:
		return federation.OpRemove
	case opReplace:
		return federation.OpReplace
	case opTest:
		return federation.OpTest
	}
	return "unknown"
}

// op is a compiled operation: the pointer is split and unescaped, the value decoded, once.
type op struct {
	kind   opKind
	path   string
	tokens []string
	value  any
}

// Patch is a compiled list of override operations: validated, with pointers split and values
// decoded once, so that applying it to many objects (one per cluster) costs only the edits.
// A Patch is immutable and safe for concurrent use; Apply never lets the object share memory
// with the Patch.
//
// The zero Patch is valid and changes nothing.
type Patch struct {
	ops []op
}

// Compile validates and compiles ops. It fails with a *PathError wrapping ErrUnsupportedOp,
// ErrInvalidPath, ErrIdentityPath, ErrMissingValue or ErrInvalidValue for the first bad
// operation; errors that depend on the object (a missing path, a failed test) come from
// Apply.
func Compile(ops []federation.OverrideOp) (*Patch, error) {
	p := &Patch{ops: make([]op, 0, len(ops))}
	for _, x := range ops {
		o, err := compileOp(x)
		if err != nil {
			return nil, err
		}
		p.ops = append(p.ops, o)
	}
	return p, nil
}

// Len returns the number of operations.
func (p *Patch) Len() int {
	if p == nil {
		return 0
	}
	return len(p.ops)
}

// Apply applies the patch to obj. It is atomic: when an operation fails, obj is left exactly
// as it was and the error is a *PathError naming the operation and path. On success the
// containers on the edited paths are replaced by edited copies rather than changed in place
// (copy-on-write), so maps or slices of obj that the caller holds keep their old contents.
func (p *Patch) Apply(obj *unstructured.Unstructured) error {
	if p.Len() == 0 {
		return nil
	}
	root, err := p.applyTo(obj.Object, true)
	if err != nil {
		return err
	}
	obj.Object = root
	return nil
}

// applyTo applies the patch to root and returns the new root. With shared set, root and
// everything under it are treated as read-only (they may belong to the caller or be shared
// with a template) and every container on an edited path is copied first; without it, root is
// private to the caller and is edited in place (not atomic).
func (p *Patch) applyTo(root map[string]any, shared bool) (map[string]any, error) {
	e := editor{shared: shared}
	root = e.ownRoot(root)
	for i := range p.ops {
		if err := e.apply(root, &p.ops[i]); err != nil {
			return nil, err
		}
	}
	return root, nil
}

// Apply applies RFC 6902 operations to obj: add, remove, replace and test, an empty op
// meaning replace; array indexes as in RFC 6901 (add at an index inserts, "-" appends).
//
// It is atomic: when any operation fails, obj is left exactly as it was. Paths that identify
// the object (/metadata/name, /metadata/namespace, /metadata/generateName, /kind,
// /apiVersion, /metadata) are rejected with ErrIdentityPath. Every error is a *PathError
// wrapping one of the package's sentinel errors (ErrPathNotFound, ErrTestFailed,
// ErrInvalidIndex, ...).
//
// Apply gives the same result as github.com/evanphx/json-patch/v5 for every patch and object
// except where json-patch strays from the RFCs: array indexes such as "01" or "+1", and a
// test with value null on an absent member, are errors here. It is several times faster
// because it edits the decoded object directly instead of encoding and decoding it.
func Apply(obj *unstructured.Unstructured, ops []federation.OverrideOp) error {
	p, err := Compile(ops)
	if err != nil {
		return err
	}
	return p.Apply(obj)
}

// compileOp validates one operation and decodes its value.
func compileOp(x federation.OverrideOp) (op, error) {
	o := op{path: x.Path}
	switch x.Op {
	case "", federation.OpReplace:
		o.kind = opReplace
	case federation.OpAdd:
		o.kind = opAdd
	case federation.OpRemove:
		o.kind = opRemove
	case federation.OpTest:
		o.kind = opTest
	default:
		return op{}, &PathError{Path: x.Path, Op: x.Op, Err: fmt.Errorf("%w %q (use add, remove, replace or test)", ErrUnsupportedOp, x.Op)}
	}
	fail := func(err error) (op, error) {
		return op{}, &PathError{Path: x.Path, Op: o.kind.String(), Err: err}
	}
	tokens, err := parsePointer(x.Path)
	if err != nil {
		return fail(err)
	}
	if jsonpointer.IsIdentity(x.Path) {
		return fail(ErrIdentityPath)
	}
	o.tokens = tokens
	if o.kind != opRemove {
		if x.Value == nil || len(x.Value.Raw) == 0 {
			return fail(ErrMissingValue)
		}
		v, err := decodeValue(x.Value.Raw)
		if err != nil {
			return fail(fmt.Errorf("%w: %v", ErrInvalidValue, err))
		}
		o.value = v
	}
	return o, nil
}

// newOp builds a compiled operation from a value already decoded (typed overrides use it, so
// their values are never encoded and decoded). path must be valid; it is checked anyway.
func newOp(kind opKind, path string, value any) (op, error) {
	tokens, err := parsePointer(path)
	if err != nil {
		return op{}, &PathError{Path: path, Op: kind.String(), Err: err}
	}
	if jsonpointer.IsIdentity(path) {
		return op{}, &PathError{Path: path, Op: kind.String(), Err: ErrIdentityPath}
	}
	return op{kind: kind, path: path, tokens: tokens, value: value}, nil
}
