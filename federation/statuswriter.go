package federation

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StatusWriter takes the status changes the loops of one process make to federated objects
// and writes them to the host later, the changes several loops make to one object within a
// short window merged into one status write. Each loop's change stays its own: a mutation that
// sets only the fields the loop owns, applied again on a fresher copy after a Conflict.
// A loop without one (its Options.StatusWriter nil) writes its status itself, at once.
//
// +kubebuilder:object:generate=false
type StatusWriter interface {
	// WriteStatus hands loop's change of obj's status to the writer. mutate sets the loop's
	// own fields in status, a copy it may change, and leaves every other field as it is; it
	// may run again on another copy of the object. An error of mutate on obj is returned at
	// once and nothing is kept.
	WriteStatus(loop string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, mutate func(status map[string]any) error) error

	// Pending returns obj with the status changes not yet written applied, or obj itself when
	// there are none: what a loop reads is what the host will hold.
	Pending(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured

	// Notify calls fn with the loop and the key of every object of gvr another loop than loop
	// hands a change of, until ctx is done, so loop can pass over it while the change is
	// still pending.
	Notify(ctx context.Context, loop string, gvr schema.GroupVersionResource, fn func(from string, key Key))
}

// PendingReader returns r reading the objects of gvr with w's pending status changes applied;
// r itself when w is nil.
func PendingReader(r Reader, w StatusWriter, gvr schema.GroupVersionResource) Reader {
	if w == nil {
		return r
	}
	return pendingReader{Reader: r, w: w, gvr: gvr}
}

type pendingReader struct {
	Reader
	w   StatusWriter
	gvr schema.GroupVersionResource
}

// viewer is a Reader that also reads objects without copying them (loop.Viewer).
type viewer interface {
	View(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
}

// sharedPending is a StatusWriter that applies its pending changes to an object it must
// neither change nor keep (statuswrite.Writer), and says whether what it returns is a copy.
type sharedPending interface {
	PendingShared(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, bool)
}

func (p pendingReader) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	v, canView := p.Reader.(viewer)
	sp, canShare := p.w.(sharedPending)
	if gvr == p.gvr && canView && canShare {
		// One copy: the cache's object, with the pending changes applied or as it is.
		u, err := v.View(ctx, gvr, namespace, name)
		if err != nil {
			return nil, err
		}
		out, copied := sp.PendingShared(gvr, u)
		if !copied {
			out = out.DeepCopy()
		}
		return out, nil
	}
	u, err := p.Reader.Get(ctx, gvr, namespace, name)
	if err != nil || gvr != p.gvr {
		return u, err
	}
	return p.w.Pending(gvr, u), nil
}

// ReaderFor returns the reader of gvr's objects: the wrapped reader for any other resource than
// the one whose pending changes p applies. The wrapper offers only Get and List; a caller
// that wants what the wrapped reader offers besides (a cache's version, its decoded Clusters,
// reads without copies) for another resource asks for it through this (loop.ReaderFor).
func (p pendingReader) ReaderFor(gvr schema.GroupVersionResource) (Reader, bool) {
	if gvr == p.gvr {
		return p, false
	}
	return p.Reader, true
}

func (p pendingReader) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := p.Reader.List(ctx, gvr, namespace, opts)
	if err != nil || gvr != p.gvr {
		return l, err
	}
	for i := range l.Items {
		l.Items[i] = *p.w.Pending(gvr, &l.Items[i])
	}
	return l, nil
}
