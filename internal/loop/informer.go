package loop

import (
	"context"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/fedkit/fedkit/federation"
)

// NewInformer returns an informer of gvr in namespace ("" = all) through c, which may be any
// federation.ClusterClient (a fake one included), restricted to objects matching selector
// ("" = all), its store indexed by namespace.
//
// The informer lists and then watches; it does not use streaming lists (WatchList), which
// not every ClusterClient serves and whose failures client-go retries without reporting them
// to the watch error handler.
func NewInformer(c federation.ClusterClient, gvr schema.GroupVersionResource, namespace, selector string) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return c.List(ctx, gvr, namespace, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return c.Watch(ctx, gvr, namespace, o)
		},
	}
	return cache.NewSharedIndexInformerWithOptions(
		cache.ToListWatcherWithWatchListSemantics(lw, noWatchList{}),
		&unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{
			ObjectDescription: gvr.String(),
			Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		},
	)
}

// noWatchList tells client-go to use a plain List and Watch.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// informer is the shared informer of one source in one Run, with the registration of the
// source's handler.
type informer struct {
	*sharedInformer
	source Source
	// reg is set once the source's handler is added; Reader reads it meanwhile.
	reg atomic.Pointer[fanoutHandler]
}

// synced reports whether the source's handler has seen every object of its first list.
func (inf *informer) synced() bool {
	reg := inf.reg.Load()
	return reg != nil && reg.HasSynced()
}

// handler turns the changes of source s into keys on queue.
func handler(s Source, run *running, sources []Source, queue workqueue.TypedRateLimitingInterface[federation.Key]) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		u, ok := objectOf(obj)
		if !ok {
			return
		}
		switch {
		case s.Referrers != nil:
			ref := run.informers[indexOf(sources, s.Referrers.GVR)]
			for _, o := range ref.GetStore().List() {
				if r := o.(*unstructured.Unstructured); s.Referrers.RefersTo(r, u) {
					queue.Add(keyOf(r))
				}
			}
		case s.Broadcast:
			for _, o := range run.informers[0].GetStore().List() {
				queue.Add(keyOf(o.(*unstructured.Unstructured)))
			}
		case s.Keys != nil:
			for _, k := range s.Keys(u) {
				queue.Add(k)
			}
		default:
			queue.Add(keyOf(u))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, obj any) {
			if s.Changed != nil {
				o, ok1 := objectOf(old)
				n, ok2 := objectOf(obj)
				if ok1 && ok2 && !s.Changed(o, n) {
					return
				}
			}
			enqueue(obj)
		},
		DeleteFunc: func(obj any) {
			if u, ok := objectOf(obj); ok && s.Deleted != nil {
				s.Deleted(u)
			}
			enqueue(obj)
		},
	}
}

func keyOf(u *unstructured.Unstructured) federation.Key {
	return federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
}

// objectOf returns the object of an informer event or tombstone.
func objectOf(obj any) (*unstructured.Unstructured, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}
