package fake

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/federation"
)

// The federation.ClusterClient methods. Each records an Action, applies the injected faults
// (see begin), then runs the hook for its verb, if any, or the storage. The storage's
// semantics are documented on the package.

// Get returns a copy of the object, or an error satisfying apierrors.IsNotFound.
func (c *Cluster) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	h, err := c.begin(ctx, Action{Verb: VerbGet, Resource: gvr, Namespace: namespace, Name: name})
	if err != nil {
		return nil, err
	}
	if h.Get != nil {
		return h.Get(ctx, storage{c}, gvr, namespace, name)
	}
	return storage{c}.Get(ctx, gvr, namespace, name)
}

// List returns copies of the objects matching opts.LabelSelector and opts.FieldSelector
// (metadata.name and metadata.namespace), sorted by namespace and name. namespace "" lists
// all namespaces. The list's resourceVersion can start a Watch. Limit, Continue and
// ResourceVersion are ignored: every list is a complete, most recent one.
func (c *Cluster) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	h, err := c.begin(ctx, Action{Verb: VerbList, Resource: gvr, Namespace: namespace, ListOptions: *opts.DeepCopy()})
	if err != nil {
		return nil, err
	}
	if h.List != nil {
		return h.List(ctx, storage{c}, gvr, namespace, opts)
	}
	return storage{c}.List(ctx, gvr, namespace, opts)
}

// Create stores a copy of obj with a new uid, creationTimestamp, resourceVersion and (for
// types that track it) generation 1, and returns it. An invalid name, labels or annotations
// are an error satisfying apierrors.IsInvalid; see the package documentation for the others.
func (c *Cluster) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	a := Action{Verb: VerbCreate, Resource: gvr, Object: obj} // begin records a copy
	if obj != nil {
		a.Namespace, a.Name = obj.GetNamespace(), obj.GetName()
	}
	h, err := c.begin(ctx, a)
	if err != nil {
		return nil, err
	}
	if h.Create != nil {
		return h.Create(ctx, storage{c}, gvr, obj)
	}
	return storage{c}.Create(ctx, gvr, obj)
}

// Update replaces the object; status changes are ignored for resources with a status
// subresource. A set, stale resourceVersion is a Conflict; an empty one updates
// unconditionally where the resource allows it, and is an error satisfying
// apierrors.IsInvalid where it does not (custom resources, Leases, ...; see
// [Cluster.SetUnconditionalUpdate]). Invalid metadata is an error satisfying
// apierrors.IsInvalid.
func (c *Cluster) Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	h, err := c.begin(ctx, writeAction(VerbUpdate, gvr, obj))
	if err != nil {
		return nil, err
	}
	if h.Update != nil {
		return h.Update(ctx, storage{c}, gvr, obj)
	}
	return storage{c}.Update(ctx, gvr, obj)
}

// UpdateStatus replaces only the object's status, with the same Conflict rules as Update. For
// a resource without a status subresource it returns an error satisfying apierrors.IsNotFound.
func (c *Cluster) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	a := writeAction(VerbUpdateStatus, gvr, obj)
	a.Subresource = "status"
	h, err := c.begin(ctx, a)
	if err != nil {
		return nil, err
	}
	if h.UpdateStatus != nil {
		return h.UpdateStatus(ctx, storage{c}, gvr, obj)
	}
	return storage{c}.UpdateStatus(ctx, gvr, obj)
}

// Patch applies a JSON patch, a merge patch, or (for built-in types) a strategic merge patch,
// and writes the result like Update. Server-side apply is not modelled: it returns an error
// satisfying apierrors.IsUnsupportedMediaType.
func (c *Cluster) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	h, err := c.begin(ctx, Action{Verb: VerbPatch, Resource: gvr, Namespace: namespace, Name: name, PatchType: pt, Patch: append([]byte(nil), data...)})
	if err != nil {
		return nil, err
	}
	if h.Patch != nil {
		return h.Patch(ctx, storage{c}, gvr, namespace, name, pt, data)
	}
	return storage{c}.Patch(ctx, gvr, namespace, name, pt, data)
}

// Delete deletes the object, honouring opts.Preconditions and opts.DryRun. An object with
// finalizers gets a deletionTimestamp instead and goes away when an update removes the last
// one.
func (c *Cluster) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	h, err := c.begin(ctx, Action{Verb: VerbDelete, Resource: gvr, Namespace: namespace, Name: name, DeleteOptions: *opts.DeepCopy()})
	if err != nil {
		return err
	}
	if h.Delete != nil {
		return h.Delete(ctx, storage{c}, gvr, namespace, name, opts)
	}
	return storage{c}.Delete(ctx, gvr, namespace, name, opts)
}

// Watch streams changes after opts.ResourceVersion, or, when it is "" or "0", synthetic Added
// events for the current objects followed by changes. A resourceVersion older than the
// cluster's event history is an error satisfying apierrors.IsResourceExpired (410). The watch
// ends when Stop is called, ctx is done, or the cluster is partitioned.
func (c *Cluster) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	h, err := c.begin(ctx, Action{Verb: VerbWatch, Resource: gvr, Namespace: namespace, ListOptions: *opts.DeepCopy()})
	if err != nil {
		return nil, err
	}
	if h.Watch != nil {
		return h.Watch(ctx, storage{c}, gvr, namespace, opts)
	}
	return storage{c}.Watch(ctx, gvr, namespace, opts)
}

func writeAction(v Verb, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) Action {
	a := Action{Verb: v, Resource: gvr, Object: obj} // begin records a copy
	if obj != nil {
		a.Namespace, a.Name = obj.GetNamespace(), obj.GetName()
	}
	return a
}

// storage is the cluster without recording, faults or hooks: what hooks get as next.
type storage struct{ c *Cluster }

var _ federation.ClusterClient = storage{}

func (s storage) Get(_ context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	s.c.lock()
	defer s.c.mu.Unlock()
	return s.c.getLocked(gvr, namespace, name)
}

func (s storage) List(_ context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	s.c.lock()
	defer s.c.mu.Unlock()
	if list, ok, err := s.c.metricsListLocked(gvr, namespace, opts); ok {
		return list, err
	}
	return s.c.listLocked(gvr, namespace, opts)
}

// The writes do what depends on the object alone (normalising it, and for a create decoding it
// into its Go type) before they take the cluster's lock, and copy what they return after they
// release it, so writers of one cluster wait for each other only for the storage itself.

func (s storage) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	in, err := normalize(obj)
	if err != nil {
		return nil, err
	}
	cc := checkCreate(gvr, in)
	out, err := ownCopy(s.locked(func() (*unstructured.Unstructured, error) {
		return s.c.insertCheckedLocked(gvr, in, false, cc)
	}))
	warnDropped(ctx, cc.dropped, err)
	return out, err
}

func (s storage) Update(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var dropped []string
	out, err := s.update(gvr, obj, writeMain, &dropped)
	warnDropped(ctx, dropped, err)
	return out, err
}

func (s storage) UpdateStatus(_ context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return s.update(gvr, obj, writeStatus, nil)
}

func (s storage) update(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, mode writeMode, dropped *[]string) (*unstructured.Unstructured, error) {
	in, nerr := normalizeFor(mode, obj)
	return ownCopy(s.locked(func() (*unstructured.Unstructured, error) {
		return s.c.updateNormalizedLocked(gvr, in, nerr, mode, dropped)
	}))
}

// warnDropped hands the warnings of a create or update that succeeded to the request's
// handler (federation.WithWarningHandler), one per field dropped because the Go type does
// not have it, in the real server's words.
func warnDropped(ctx context.Context, dropped []string, err error) {
	if err != nil {
		return
	}
	for _, p := range dropped {
		federation.HandleWarning(ctx, federation.UnknownFieldWarning(p))
	}
}

func (s storage) Patch(_ context.Context, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	return ownCopy(s.locked(func() (*unstructured.Unstructured, error) {
		return s.c.patchLocked(gvr, namespace, name, pt, data)
	}))
}

// locked runs write with the cluster's lock held, and releases it with unlock (which delivers
// the member-cache notifications the write queued), even when write panics.
func (s storage) locked(write func() (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	s.c.lock()
	defer s.c.unlock()
	return write()
}

func (s storage) Delete(_ context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	s.c.lock()
	defer s.c.unlock()
	return s.c.deleteLocked(gvr, namespace, name, opts)
}

func (s storage) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	s.c.lock()
	defer s.c.mu.Unlock()
	if s.c.partitioned {
		return nil, unreachable(s.c.name, Action{Verb: VerbWatch, Resource: gvr, Namespace: namespace})
	}
	return s.c.startWatchLocked(ctx, gvr, namespace, opts)
}
