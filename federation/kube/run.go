package kube

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Retry backoff of Run for Clusters whose Reconcile failed with a retryable error (the host
// could not be read).
const (
	retryBaseDelay = 100 * time.Millisecond
	retryMaxDelay  = 2 * time.Minute
)

// runState is what Run shares with CachedReader while it runs.
type runState struct {
	ctx context.Context
	wg  *sync.WaitGroup
}

// Run keeps the set in line with the host until ctx is done: it watches Cluster objects and the
// Secrets in the set's namespace, and calls Reconcile for every Cluster that changed or whose
// Secret changed, retrying failures with exponential backoff (on Options.Clock). It also hosts
// the informers of CachedReader.
//
// Run blocks until ctx is done and returns only after every goroutine it started (workers,
// informers, cached readers' informers) has exited; it then returns nil. Calling Run while it
// is already running is an error. For a set built by ClusterSetFromKubeconfig, Run only hosts
// cached readers.
//
// Run has the func(context.Context) error shape, so it can be handed to a controller-runtime
// manager as manager.RunnableFunc(set.Run).
func (s *ClusterSet) Run(ctx context.Context) error {
	ctx = logr.NewContext(ctx, s.opts.Logger) // client-go's informers log through ctx
	var wg sync.WaitGroup
	s.mu.Lock()
	if s.run != nil {
		s.mu.Unlock()
		return errors.New("kube: Run: the cluster set is already running")
	}
	s.run = &runState{ctx: ctx, wg: &wg}
	s.mu.Unlock()
	defer s.stopRun(&wg)

	if s.host == nil {
		<-ctx.Done()
		return nil
	}

	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[federation.Key](retryBaseDelay, retryMaxDelay),
		workqueue.TypedRateLimitingQueueConfig[federation.Key]{Clock: s.opts.Clock},
	)
	defer queue.ShutDown()

	clusters := newInformer(s.host, federation.ClusterGVR, "", "", true)
	secrets := newInformer(s.host, federation.SecretGVR, s.opts.Namespace, "", true)
	// The set reads Secrets afresh in Reconcile; the informer only needs to notice changes, so
	// it keeps no credentials in memory.
	if err := secrets.SetTransform(dropSecretData); err != nil {
		return err
	}
	enqueueCluster := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(federation.Key{Name: key})
		}
	}
	enqueueUsers := func(obj any) {
		secret, ok := objectName(obj)
		if !ok {
			return
		}
		// The informer's store, not the set's members, says who refers to the Secret: a
		// Reconcile that has read "no such Secret" but not yet recorded it must not miss the
		// Secret's creation.
		for _, o := range clusters.GetStore().List() {
			u := o.(*unstructured.Unstructured)
			if ref, _, _ := unstructured.NestedString(u.Object, "spec", "secretRef", "name"); ref == secret {
				queue.Add(federation.Key{Name: u.GetName()})
			}
		}
	}
	if _, err := clusters.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueCluster,
		UpdateFunc: func(_, obj any) { enqueueCluster(obj) },
		DeleteFunc: enqueueCluster,
	}); err != nil {
		return err
	}
	if _, err := secrets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueUsers,
		UpdateFunc: func(_, obj any) { enqueueUsers(obj) },
		DeleteFunc: enqueueUsers,
	}); err != nil {
		return err
	}
	wg.Go(func() { clusters.RunWithContext(ctx) })
	wg.Go(func() { secrets.RunWithContext(ctx) })
	if !cache.WaitForCacheSync(ctx.Done(), clusters.HasSynced, secrets.HasSynced) {
		return nil // ctx is done
	}
	for range s.opts.Workers {
		wg.Go(func() { s.work(ctx, queue) })
	}
	<-ctx.Done()
	return nil
}

// stopRun stops every cached reader's informer and waits for all of Run's goroutines. The
// queue is shut down before (deferred later in Run), so the workers return.
func (s *ClusterSet) stopRun(wg *sync.WaitGroup) {
	s.mu.Lock()
	s.run = nil
	for _, m := range s.members {
		m.stopCaches()
		m.caches = nil
	}
	s.mu.Unlock()
	wg.Wait()
}

func (s *ClusterSet) work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[federation.Key]) {
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		_, err := s.Reconcile(ctx, key)
		switch {
		case err == nil, federation.IsTerminal(err):
			// Terminal reasons were logged by Reconcile; a change to the Cluster or its Secret
			// brings the key back.
			queue.Forget(key)
		case ctx.Err() != nil:
			// Shutting down.
		default:
			s.opts.Logger.Error(err, "Reconciling a Cluster failed; will retry", "cluster", key.Name)
			queue.AddRateLimited(key)
		}
		queue.Done(key)
	}
}

// newInformer returns an informer of gvr through c (see loop.NewInformer). watchList allows
// streaming lists where c supports them: a Client's dynamic client knows (a real one supports
// them, client-go's fake does not); any other ClusterClient gets a plain List and Watch.
func newInformer(c federation.ClusterClient, gvr schema.GroupVersionResource, namespace, selector string, watchList bool) cache.SharedIndexInformer {
	var semantics any
	if kc, ok := c.(*Client); ok && watchList {
		semantics = kc.dyn
	}
	return loop.NewInformer(c, gvr, namespace, selector, semantics)
}

// dropSecretData removes data and stringData from Secrets as the informer stores them.
func dropSecretData(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// The object is freshly decoded and not shared yet: changing it in place is allowed.
		delete(u.Object, "data")
		delete(u.Object, "stringData")
		return u, nil
	}
	return obj, nil
}

// objectName returns the name of an informer's object or tombstone.
func objectName(obj any) (string, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return "", false
	}
	return u.GetName(), true
}
