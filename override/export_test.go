package override

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// Test-only entry points into the typed overriders, for the black-box tests (package
// override_test). They are not part of the API: Render is the only way embedders apply
// override entries, because it is the only place that knows the cluster, the order of the
// entries and the object they apply to.

// Ops returns the operations that one override entry renders to for obj: those of its typed
// overriders, then its ClusterOverrides, exactly as ApplyOverride applies them. obj is
// not changed. typ gives the replicas path.
func Ops(obj *unstructured.Unstructured, o federation.ClusterOverride, typ federation.TypeConfig) ([]federation.OverrideOp, error) {
	raw, err := Compile(o.ClusterOverrides)
	if err != nil {
		return nil, err
	}
	var rec []op
	e := editor{shared: true}
	a := entryApplier{e: &e, replicas: replicasPointer(typ), record: &rec}
	if err := a.run(e.ownRoot(obj.Object), &o, raw); err != nil {
		return nil, err
	}
	out := make([]federation.OverrideOp, len(rec))
	for i := range rec {
		if out[i], err = rec[i].overrideOp(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ApplyOverride applies one override entry to obj, atomically, whatever cluster it is for:
// its typed overriders, then its ClusterOverrides. typ gives the replicas path.
func ApplyOverride(obj *unstructured.Unstructured, o federation.ClusterOverride, typ federation.TypeConfig) error {
	raw, err := Compile(o.ClusterOverrides)
	if err != nil {
		return err
	}
	e := editor{shared: true}
	a := entryApplier{e: &e, replicas: replicasPointer(typ)}
	root := e.ownRoot(obj.Object)
	if err := a.run(root, &o, raw); err != nil {
		return err
	}
	obj.Object = root
	return nil
}

// overrideOp converts a compiled operation back to its API form.
func (o *op) overrideOp() (federation.OverrideOp, error) {
	x := federation.OverrideOp{Op: o.kind.String(), Path: o.path}
	if o.kind != opRemove {
		v, err := federation.NewRawValue(o.value)
		if err != nil {
			return x, &PathError{Path: o.path, Op: o.kind.String(), Err: fmt.Errorf("%w: %v", ErrInvalidValue, err)}
		}
		x.Value = v
	}
	return x, nil
}

// RenderMembersWithoutEncodingCache is RenderMembers without the template's encodings: every
// member's hash walks its whole object. BenchmarkRenderMembersEncodingCache compares the two,
// which is what keeps the identity cache in the package.
func RenderMembersWithoutEncodingCache(r *Renderer, in Input, members []Member) []Rendered {
	out := make([]Rendered, len(members))
	sh := newShared(in, len(members))
	sh.encodings = nil
	for i, m := range members {
		in.ClusterName, in.ClusterLabels, in.Replicas, in.Existing = m.Name, m.Labels, m.Replicas, m.Existing
		obj, err := r.renderWith(&in, sh)
		out[i] = Rendered{Object: obj, Err: err}
	}
	return out
}
