package loop

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
)

// Reconciler is what a loop type implements.
type Reconciler interface {
	Reconcile(ctx context.Context, key federation.Key) (federation.Result, error)
}

// Source is a resource on the host whose changes enqueue keys.
type Source struct {
	// GVR and Namespace ("" = all namespaces) name what to watch.
	GVR       schema.GroupVersionResource
	Namespace string
	// LabelSelector restricts the watch ("" = everything).
	LabelSelector string
	// Keys maps a changed (added, updated or deleted) object to the keys to reconcile. nil
	// means the object's own namespace and name.
	Keys func(obj *unstructured.Unstructured) []federation.Key
	// Broadcast makes any change enqueue every object of the first source instead (a Cluster
	// that changes concerns every federated object). Keys is ignored then.
	Broadcast bool
}

// Options configure Run. The zero value is usable.
type Options struct {
	// Name appears in logs.
	Name string
	// Workers is how many keys are reconciled in parallel (default 2).
	Workers int
	// Clock drives requeues and backoff (default: the real clock).
	Clock clock.WithTicker
	// Logger receives errors and terminal failures (default: logr.Discard()).
	Logger logr.Logger
	// BaseDelay and MaxDelay bound the exponential retry backoff (default 100ms and 5m).
	BaseDelay, MaxDelay time.Duration
}

func (o *Options) complete() {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 100 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 5 * time.Minute
	}
}

// Run watches sources on host and reconciles the keys they produce with r until ctx is done.
// It returns nil after every goroutine it started has exited, or an error if it could not
// start (no sources).
func Run(ctx context.Context, host federation.ClusterClient, r Reconciler, sources []Source, opts Options) error {
	opts.complete()
	if len(sources) == 0 {
		return fmt.Errorf("loop %s: no sources to watch", opts.Name)
	}
	ctx = logr.NewContext(ctx, opts.Logger)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[federation.Key](opts.BaseDelay, opts.MaxDelay),
		workqueue.TypedRateLimitingQueueConfig[federation.Key]{Clock: opts.Clock},
	)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer queue.ShutDown() // runs before wg.Wait, so workers return

	informers := make([]cache.SharedIndexInformer, len(sources))
	for i, s := range sources {
		informers[i] = NewInformer(host, s.GVR, s.Namespace, s.LabelSelector, nil)
	}
	primary := informers[0]
	for i, s := range sources {
		enqueue := func(obj any) {
			u, ok := objectOf(obj)
			if !ok {
				return
			}
			switch {
			case s.Broadcast:
				for _, o := range primary.GetStore().List() {
					p := o.(*unstructured.Unstructured)
					queue.Add(federation.Key{Namespace: p.GetNamespace(), Name: p.GetName()})
				}
			case s.Keys != nil:
				for _, k := range s.Keys(u) {
					queue.Add(k)
				}
			default:
				queue.Add(federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()})
			}
		}
		if _, err := informers[i].AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj any) { enqueue(obj) },
			DeleteFunc: enqueue,
		}); err != nil {
			return fmt.Errorf("loop %s: %w", opts.Name, err)
		}
	}
	for _, inf := range informers {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	synced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		synced[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // ctx is done
	}
	for range opts.Workers {
		wg.Go(func() { work(ctx, queue, r, opts) })
	}
	<-ctx.Done()
	return nil
}

// work reconciles keys until the queue shuts down.
func work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[federation.Key], r Reconciler, opts Options) {
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		res, err := r.Reconcile(ctx, key)
		switch {
		case ctx.Err() != nil:
			// Shutting down; the result does not matter any more.
		case err == nil:
			queue.Forget(key)
			if res.RequeueAfter > 0 {
				queue.AddAfter(key, res.RequeueAfter)
			}
		case federation.IsTerminal(err):
			opts.Logger.Error(err, "Reconcile failed; waiting for a change", "loop", opts.Name, "key", key.String())
			queue.Forget(key)
		default:
			opts.Logger.Error(err, "Reconcile failed; will retry", "loop", opts.Name, "key", key.String())
			queue.AddRateLimited(key)
		}
		queue.Done(key)
	}
}

// NewInformer returns an informer of gvr in namespace ("" = all) through c, which may be any
// federation.ClusterClient (a fake one included), restricted to objects matching selector
// ("" = all), its store indexed by namespace. watchList answers client-go's question whether c
// streams lists (see cache.ToListWatcherWithWatchListSemantics); nil means it does not, and the
// informer uses a plain List and Watch.
func NewInformer(c federation.ClusterClient, gvr schema.GroupVersionResource, namespace, selector string, watchList any) cache.SharedIndexInformer {
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
	if watchList == nil {
		watchList = noWatchList{}
	}
	return cache.NewSharedIndexInformerWithOptions(
		cache.ToListWatcherWithWatchListSemantics(lw, watchList),
		&unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{
			ObjectDescription: gvr.String(),
			Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		},
	)
}

// noWatchList tells client-go to use a plain List and Watch: not every ClusterClient streams
// lists.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// objectOf returns the object of an informer event or tombstone.
func objectOf(obj any) (*unstructured.Unstructured, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}
