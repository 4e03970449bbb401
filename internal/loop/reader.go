package loop

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/cache"

	"github.com/fedkit/fedkit/federation"
)

// Reader returns a federation.Reader of the host that serves Get and List from the loop's
// informers while Run runs and their caches have synced, and from the host otherwise.
//
// A source serves reads of its resource when it watches every object of it (no
// LabelSelector) in the namespace asked for (its Namespace is "" or that namespace) and keeps
// them whole (no Transform); reads of any other resource, or namespace, go to the host.
//
// Cached reads may lag the host by the watch's latency. That is what every informer-based
// controller accepts: writes carry the resourceVersion they read, so a write based on a stale
// object fails with a Conflict, and the loop retries once the cache has caught up. Objects
// returned are the caller's own.
//
// Reconcile methods called by Run use it, so a reconcile costs no API reads; the same
// methods called directly by an embedder read through the host.
func (l *Loop) Reader() federation.Reader { return reader{l} }

type reader struct{ l *Loop }

// cacheFor returns the synced informer that serves reads of gvr in namespace, or nil. A source
// with a LabelSelector serves only Lists (want != nil) whose selector asks for no more than
// that source holds (see covers); Gets need a source of whole objects.
func (l *Loop) cacheFor(gvr schema.GroupVersionResource, namespace string, want labels.Selector) cache.SharedIndexInformer {
	l.mu.Lock()
	run := l.run
	l.mu.Unlock()
	if run == nil {
		return nil
	}
	for _, inf := range run.informers {
		s := inf.source
		if s.GVR != gvr || s.Transform != nil || (s.Namespace != "" && s.Namespace != namespace) || !inf.synced() {
			continue
		}
		if s.LabelSelector == "" || (want != nil && covers(s.LabelSelector, want)) {
			return inf
		}
	}
	return nil
}

// GetTrimmed returns a copy of namespace/name as the synced informer of gvr in namespace
// stores it, Transform applied: for a loop that keeps a trimmed copy on purpose (Secrets
// without their data) and knows what its Transform dropped. Reader never serves such
// objects. ok is false when no synced informer holds gvr in namespace (Run has not synced, or
// has returned); a missing object is an error satisfying apierrors.IsNotFound.
func (l *Loop) GetTrimmed(gvr schema.GroupVersionResource, namespace, name string) (u *unstructured.Unstructured, ok bool, err error) {
	l.mu.Lock()
	run := l.run
	l.mu.Unlock()
	if run == nil {
		return nil, false, nil
	}
	for _, inf := range run.informers {
		s := inf.source
		if s.GVR != gvr || s.LabelSelector != "" || (s.Namespace != "" && s.Namespace != namespace) || !inf.synced() {
			continue
		}
		u, err := GetFromCache(inf, gvr, namespace, name)
		return u, true, err
	}
	return nil, false, nil
}

// DecodeCluster decodes a Cluster once per uid and resourceVersion for every loop of the
// Loop's Cache while Run runs (see Cache.DecodeCluster), afresh otherwise. The result may be
// shared: callers must not change it.
func (r reader) DecodeCluster(u *unstructured.Unstructured) (*federation.Cluster, error) {
	r.l.mu.Lock()
	run := r.l.run
	r.l.mu.Unlock()
	if run == nil {
		return federation.ClusterFromUnstructured(u)
	}
	return run.cache.DecodeCluster(u)
}

func (r reader) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	inf := r.l.cacheFor(gvr, namespace, nil)
	if inf == nil {
		return r.l.host.Get(ctx, gvr, namespace, name)
	}
	return GetFromCache(inf, gvr, namespace, name)
}

func (r reader) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	inf := r.l.cacheFor(gvr, namespace, sel)
	if inf == nil {
		return r.l.host.List(ctx, gvr, namespace, opts)
	}
	return ListFromCache(inf, gvr, namespace, opts)
}

// GetFromCache returns a copy of the object namespace/name in inf's store, or an error
// satisfying apierrors.IsNotFound.
func GetFromCache(inf cache.SharedIndexInformer, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	u, err := ViewFromCache(inf, gvr, namespace, name)
	if err != nil {
		return nil, err
	}
	return u.DeepCopy(), nil
}

// ViewFromCache is GetFromCache without the copy: the object as inf's store holds it, which
// the caller must not change (see Viewer).
func ViewFromCache(inf cache.SharedIndexInformer, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	obj, ok, err := inf.GetStore().GetByKey(federation.Key{Namespace: namespace, Name: name}.String())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return obj.(*unstructured.Unstructured), nil
}

// ListFromCache returns copies of the objects in inf's store in namespace ("" = all) that
// match opts.LabelSelector and opts.FieldSelector (metadata.name and metadata.namespace),
// sorted by namespace and name, with the cache's resourceVersion. Paging options are ignored:
// the list is complete. A selector that does not parse is an error satisfying
// apierrors.IsBadRequest.
func ListFromCache(inf cache.SharedIndexInformer, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	stored, err := ViewListFromCache(inf, gvr, namespace, opts)
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Items: make([]unstructured.Unstructured, 0, len(stored))}
	out.SetResourceVersion(inf.LastSyncResourceVersion())
	for _, u := range stored {
		out.Items = append(out.Items, *u.DeepCopy())
	}
	return out, nil
}

// ViewListFromCache is ListFromCache without the copies: the objects as inf's store holds
// them, which the caller must not change (see Viewer).
func ViewListFromCache(inf cache.SharedIndexInformer, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	fsel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	var objs []any
	switch name, value, ok := indexFor(inf, sel); {
	case ok:
		if objs, err = inf.GetIndexer().ByIndex(name, value); err != nil {
			return nil, fmt.Errorf("list %s by %s: %w", gvr.GroupResource(), name, err)
		}
	case namespace == "":
		objs = inf.GetStore().List()
	default:
		if objs, err = inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace); err != nil {
			return nil, fmt.Errorf("list %s in %s: %w", gvr.GroupResource(), namespace, err)
		}
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		u := o.(*unstructured.Unstructured)
		f := fields.Set{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace()}
		if (namespace == "" || u.GetNamespace() == namespace) && sel.Matches(labels.Set(u.GetLabels())) && fsel.Matches(f) {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		if c := cmp.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}
		return cmp.Compare(a.GetName(), b.GetName())
	})
	return out, nil
}

// Viewer is a Reader that can also return objects as its cache stores them, without the
// copy Get and List make: for a caller that only reads them (a Cluster's Ready condition, the
// Clusters a pass decodes). What View and ViewList return is shared: the caller must not
// change it. A Loop's Reader is one; View and ViewList read through any Reader.
type Viewer interface {
	View(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
	ViewList(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error)
}

// View returns namespace/name of gvr for reading only: the cache's own object when r (or the
// reader it wraps for gvr, see ReaderFor) is a Viewer, else r.Get's copy. The caller must not
// change it.
func View(ctx context.Context, r federation.Reader, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if v, ok := ReaderFor(r, gvr).(Viewer); ok {
		return v.View(ctx, gvr, namespace, name)
	}
	return r.Get(ctx, gvr, namespace, name)
}

// ViewList is List for reading only, as View is Get: the items in List's order. The caller
// must not change them.
func ViewList(ctx context.Context, r federation.Reader, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	if v, ok := ReaderFor(r, gvr).(Viewer); ok {
		return v.ViewList(ctx, gvr, namespace, opts)
	}
	return itemsOf(r.List(ctx, gvr, namespace, opts))
}

// ReaderFor returns the reader behind r for reads of gvr: r itself, or the reader a wrapper
// around r passes gvr's reads to unchanged (federation.PendingReader for any other resource
// than its own), so that what that reader offers besides Get and List (Viewer, ClusterDecoder,
// CacheVersion) is not hidden by the wrapper.
func ReaderFor(r federation.Reader, gvr schema.GroupVersionResource) federation.Reader {
	for {
		w, ok := r.(interface {
			ReaderFor(schema.GroupVersionResource) (federation.Reader, bool)
		})
		if !ok {
			return r
		}
		inner, ok := w.ReaderFor(gvr)
		if !ok {
			return r
		}
		r = inner
	}
}

func (r reader) View(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	inf := r.l.cacheFor(gvr, namespace, nil)
	if inf == nil {
		return r.l.host.Get(ctx, gvr, namespace, name)
	}
	return ViewFromCache(inf, gvr, namespace, name)
}

func (r reader) ViewList(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if inf := r.l.cacheFor(gvr, namespace, sel); inf != nil {
		return ViewListFromCache(inf, gvr, namespace, opts)
	}
	return itemsOf(r.l.host.List(ctx, gvr, namespace, opts))
}

// itemsOf returns pointers to a List's items.
func itemsOf(l *unstructured.UnstructuredList, err error) ([]*unstructured.Unstructured, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

// covers reports whether every object matching want also matches the source selector held,
// judged requirement by requirement: each requirement of held must appear in want, or be an
// Exists requirement on a key that want requires to equal (or be in) some values. That is
// enough for the selectors loops use ("owner-uid" held, "owner-uid=<uid>" wanted) and never
// wrongly says yes.
func covers(held string, want labels.Selector) bool {
	hs, err := labels.Parse(held)
	if err != nil {
		return false
	}
	hreqs, _ := hs.Requirements()
	wreqs, _ := want.Requirements()
	for _, h := range hreqs {
		ok := false
		for _, w := range wreqs {
			if w.Key() != h.Key() {
				continue
			}
			if w.String() == h.String() {
				ok = true
				break
			}
			if h.Operator() == selection.Exists {
				switch w.Operator() {
				case selection.Equals, selection.DoubleEquals, selection.In, selection.Exists:
					ok = true
				}
			}
			if ok {
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// labelIndex names the index of a label key (Source.IndexLabels).
func labelIndex(key string) string { return "label:" + key }

// labelIndexFunc indexes objects by the value of one label.
func labelIndexFunc(key string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, nil
		}
		if v, ok := u.GetLabels()[key]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// indexFor returns a label index of inf that serves sel: one on a key sel requires to equal a
// value.
func indexFor(inf cache.SharedIndexInformer, sel labels.Selector) (string, string, bool) {
	reqs, _ := sel.Requirements()
	indexers := inf.GetIndexer().GetIndexers()
	for _, r := range reqs {
		if r.Operator() != selection.Equals && r.Operator() != selection.DoubleEquals {
			continue
		}
		name := labelIndex(r.Key())
		if _, ok := indexers[name]; ok {
			if v, ok := r.Values().PopAny(); ok {
				return name, v, true
			}
		}
	}
	return "", "", false
}

// CacheVersion returns a version of what the loop's cache of gvr in namespace holds: it
// changes whenever an object is added, changed or removed there. ok is false when reads of it
// are not served from a cache. A reader that keeps something derived from a List (decoded
// objects) can skip the List, and the copies it makes, while this has not changed. Compute it
// before the List: a version never comes back, so a List that is newer than the version it is
// kept under only costs a List more.
//
// It is computed from the stored objects' keys and resourceVersions, not from the informer's
// last seen resourceVersion, which moves before the store does.
func (r reader) CacheVersion(gvr schema.GroupVersionResource, namespace string) (string, bool) {
	inf := r.l.cacheFor(gvr, namespace, nil)
	if inf == nil {
		return "", false
	}
	h := fnv.New64a()
	var items []any
	if namespace == "" {
		items = inf.GetStore().List()
	} else {
		items, _ = inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	}
	keys := make([]string, 0, len(items))
	for _, o := range items {
		u := o.(*unstructured.Unstructured)
		keys = append(keys, u.GetNamespace()+"/"+u.GetName()+"@"+u.GetResourceVersion())
	}
	slices.Sort(keys)
	for _, k := range keys {
		_, _ = h.Write([]byte(k))
		_, _ = h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36) + "/" + strconv.Itoa(len(keys)), true
}
