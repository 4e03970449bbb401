package override

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/fedkit/fedkit/federation"
)

// ApplyJSONPatch is Apply done the plain way, compiled into the package's tests only: it
// validates ops exactly as Apply does, encodes obj to JSON, applies the operations with
// github.com/evanphx/json-patch/v5 (negative array indexes off, as RFC 6901 requires) and
// decodes the result into obj.
//
// It is the reference implementation the fast path is checked against (equivalence_test.go)
// and measured against (bench_test.go); Apply returns the same object for every input except
// the places where json-patch strays from the RFCs (see Apply). Like Apply it is atomic.
// Numbers in the result are int64 where integral, float64 otherwise, as after any JSON
// decoding.
func ApplyJSONPatch(obj *unstructured.Unstructured, ops []federation.OverrideOp) error {
	p, err := Compile(ops)
	if err != nil {
		return err
	}
	if p.Len() == 0 {
		return nil
	}
	root, err := p.applyJSONPatch(obj.Object)
	if err != nil {
		return err
	}
	obj.Object = root
	return nil
}

// errJSONPatchPanic is returned when json-patch panics. v5.9.11 does on a test whose arrays
// hold null (lazyNode.equal dereferences the nil node); the library must not crash for it.
var errJSONPatchPanic = errors.New("override: github.com/evanphx/json-patch/v5 panicked")

// applyJSONPatch runs the compiled patch through json-patch, one operation at a time when an
// operation fails (to name it), otherwise all at once.
func (p *Patch) applyJSONPatch(root map[string]any) (result map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, &PathError{Op: "apply", Err: fmt.Errorf("%w: %v", errJSONPatchPanic, r)}
		}
	}()
	if root == nil {
		root = map[string]any{}
	}
	doc, err := json.Marshal(root)
	if err != nil {
		return nil, &PathError{Path: "", Op: "encode", Err: fmt.Errorf("%w: %v", ErrInvalidValue, err)}
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	patch, err := p.jsonPatch()
	if err != nil {
		return nil, err
	}
	out, err := patch.ApplyWithOptions(doc, opts)
	if err != nil {
		// Apply one operation at a time, to name the failing one as Apply does. This can
		// also succeed: json-patch fails a test for null against a null that an earlier
		// operation of the same patch added (it sees a null node, not a missing one), and
		// passes it once the document has been encoded in between. The RFC says null equals
		// null, so the step-by-step result stands.
		for i := range patch {
			if doc, err = patch[i:i+1].ApplyWithOptions(doc, opts); err != nil {
				o := &p.ops[i]
				return nil, &PathError{Path: o.path, Op: o.kind.String(), Err: jsonPatchCause(err)}
			}
		}
		out = doc
	}
	if err := utiljson.Unmarshal(out, &result); err != nil {
		return nil, &PathError{Op: "decode", Err: fmt.Errorf("%w: %v", ErrInvalidValue, err)}
	}
	return result, nil
}

// jsonPatch encodes the compiled operations as a json-patch Patch. Values are re-encoded
// from their decoded form, so numbers are in canonical form (1.0 becomes 1).
func (p *Patch) jsonPatch() (jsonpatch.Patch, error) {
	out := make(jsonpatch.Patch, len(p.ops))
	for i := range p.ops {
		o := &p.ops[i]
		kind, _ := json.Marshal(o.kind.String())
		path, _ := json.Marshal(o.path)
		k, pt := json.RawMessage(kind), json.RawMessage(path)
		out[i] = jsonpatch.Operation{"op": &k, "path": &pt}
		if o.kind != opRemove {
			v, err := json.Marshal(o.value)
			if err != nil {
				return nil, &PathError{Path: o.path, Op: o.kind.String(), Err: fmt.Errorf("%w: %v", ErrInvalidValue, err)}
			}
			val := json.RawMessage(v)
			out[i]["value"] = &val
		}
	}
	return out, nil
}

// jsonPatchCause maps json-patch's errors to this package's sentinels.
func jsonPatchCause(err error) error {
	switch {
	case errors.Is(err, jsonpatch.ErrTestFailed):
		return fmt.Errorf("%w: %v", ErrTestFailed, err)
	case errors.Is(err, jsonpatch.ErrInvalidIndex):
		return fmt.Errorf("%w: %v", ErrInvalidIndex, err)
	default:
		return fmt.Errorf("%w: %v", ErrPathNotFound, err)
	}
}
