package override

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// The sync loop renders each federated object for every cluster it is placed in. Most of
// that work is the same for all clusters: the override entries compile to the same
// operations, their selectors parse to the same selectors, and the member objects, built
// copy-on-write, share the template's unchanged subtrees, whose canonical encodings (for
// the hash) are the same too. RenderMembers does that work once per object.

// shared is the work RenderMembers does once for all clusters of an object.
type shared struct {
	compiled  []*Patch // by override index; nil until compiled
	errs      []error  // compile errors, by override index
	selectors []labels.Selector
	selErrs   []error // selector errors, by override index
	encodings *encodingCache
}

// encoder returns the encoder for the hash: with the template's encodings when sh has them.
func (sh *shared) encoder() encoder {
	if sh == nil || sh.encodings == nil {
		return encoder{}
	}
	return encoder{cache: sh.encodings}
}

// newShared returns the work to share among the renders of in for n clusters.
func newShared(in Input, n int) *shared {
	k := len(in.Overrides)
	sh := &shared{compiled: make([]*Patch, k), errs: make([]error, k), selectors: make([]labels.Selector, k), selErrs: make([]error, k)}
	if n > 1 {
		// Encoding the template once pays for itself from the second member on. A template
		// that cannot be encoded fails every member below, with its own message.
		sh.encodings, _ = newEncodingCache(in.Template)
	}
	return sh
}

// Member is one member cluster to render an object for (see RenderMembers).
type Member struct {
	// Name and Labels identify the cluster, for named and selector overrides.
	Name   string
	Labels map[string]string
	// Replicas is the cluster's scheduled replica count, or nil.
	Replicas *int64
	// Existing is the member object as it is now, or nil.
	Existing *unstructured.Unstructured
}

// Rendered is the outcome for one Member: the object, or the error (as Render returns it).
type Rendered struct {
	Object *unstructured.Unstructured
	Err    error
}

// RenderMembers renders one object for several clusters, as the sync loop does; in's
// ClusterName, ClusterLabels, Replicas and Existing are ignored and taken from each member.
// The result for members[i] is at index i and equals what Render returns for it. It is
// cheaper than calling Render for each: the override entries are compiled and their
// selectors parsed once, and the hash of each member object copies the canonical encodings
// of the template's unchanged subtrees, computed once, instead of walking the whole object
// again (see BenchmarkRenderMembers). A failure for one member does not affect the others.
func (r *Renderer) RenderMembers(in Input, members []Member) []Rendered {
	out := make([]Rendered, len(members))
	sh := newShared(in, len(members))
	for i, m := range members {
		in.ClusterName, in.ClusterLabels, in.Replicas, in.Existing = m.Name, m.Labels, m.Replicas, m.Existing
		obj, err := r.renderWith(&in, sh)
		out[i] = Rendered{Object: obj, Err: err}
	}
	return out
}
