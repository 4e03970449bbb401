package kube

import (
	"context"
	"errors"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

var _ federation.MemberCacheHealth = (*ClusterSet)(nil)

// ManagedSelector is the label selector of the objects a cached reader sees: those carrying
// federation.ManagedByLabel, whatever its value, so federations that share a fleet under
// different identities share its caches too (each loop then keeps to its own value).
const ManagedSelector = federation.ManagedByLabel

// CachedReader returns a federation.Reader that serves Get and List of gvr in the named cluster
// from an informer's cache instead of the member's API server. Loops that read every member
// object of a type on every pass (status collection, drift detection) use it so that a large
// fleet costs one watch per cluster and type instead of one List per object and pass.
//
// The cache holds only objects labelled federation.ManagedByLabel (any value, see
// ManagedSelector): an object without the label is NotFound to Get and absent from List, even
// if the member has it. Reads for another resource than gvr are an error.
//
// The informer starts with the first read (or right away, if Run is running) and lives within
// Run: it stops when Run returns, when the cluster's client is rebuilt (a new one starts on the
// next read) and when the Cluster is deleted. Reads block until the cache has synced or ctx is
// done, or until the informer's list has failed in a way waiting will not soon change (the
// member does not serve the resource, refuses it, or cannot be reached); then they return the
// informer's last list or watch error, if any (which wraps federation.ErrUnreachable when the
// member cannot be reached), else ctx's error.
// Returned objects are copies: callers may modify them.
//
// CachedReader itself returns an error wrapping ErrNotRunning when Run is not running,
// federation.ErrClusterNotFound or federation.ErrClusterNotReady; the reader's methods can
// return the same errors later, for instance after the Cluster was deleted.
func (s *ClusterSet) CachedReader(cluster string, gvr schema.GroupVersionResource) (federation.Reader, error) {
	if _, err := s.informer(cluster, gvr); err != nil {
		return nil, err
	}
	return &cachedReader{set: s, cluster: cluster, gvr: gvr}, nil
}

// memberCaches are the informers of one member client. They run under ctx, a child of Run's.
type memberCaches struct {
	ctx       context.Context
	cancel    context.CancelFunc
	informers map[schema.GroupVersionResource]*informerCache
}

func (m *member) stopCaches() {
	if m.caches != nil {
		m.caches.cancel()
	}
}

// informerCache is one informer, the last error its reflector reported, and its contact
// with the member: failing is the error of a list or watch that failed since the last
// success (nil when none), contact when the informer last heard from the member (a list or
// watch that succeeded, an event).
type informerCache struct {
	inf cache.SharedIndexInformer

	mu      sync.Mutex
	lastErr error
	failing error
	contact time.Time
}

// contacted records that the member answered the informer.
func (ic *informerCache) contacted(now time.Time) {
	ic.mu.Lock()
	ic.failing = nil
	ic.contact = now
	ic.mu.Unlock()
}

// health returns nil and now while the informer is in contact with the member, else the
// failure and its last contact.
func (ic *informerCache) health(now time.Time) (time.Time, error) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.failing == nil {
		return now, nil
	}
	return ic.contact, ic.failing
}

// contactClient is the member client an informer lists and watches through: it records each
// answer of the member in the informer's contact.
type contactClient struct {
	federation.ClusterClient
	ic    *informerCache
	clock clock.PassiveClock
}

func (c contactClient) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := c.ClusterClient.List(ctx, gvr, namespace, opts)
	if err == nil {
		c.ic.contacted(c.clock.Now())
	}
	return l, err
}

func (c contactClient) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := c.ClusterClient.Watch(ctx, gvr, namespace, opts)
	if err != nil {
		return nil, err
	}
	c.ic.contacted(c.clock.Now())
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		if e.Type != watch.Error {
			c.ic.contacted(c.clock.Now())
		}
		return e, true
	}), nil
}

func (ic *informerCache) err() error {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.lastErr
}

// definitive reports a list failure that retrying will not change soon: the member does not
// serve the resource, or does not let the federation read it.
func definitive(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsMethodNotSupported(err)
}

func (ic *informerCache) setErr(err error) {
	ic.mu.Lock()
	ic.lastErr = err
	ic.failing = err
	ic.mu.Unlock()
}

// CacheHealth implements [federation.MemberCacheHealth]: nil and the current time while the
// informer of gvr in cluster is in contact with the member (its last list or watch
// succeeded), else the error of the list or watch that failed since (wrapping
// federation.ErrUnreachable when the member cannot be reached) and when the informer last
// heard from the member. An informer that is not running is an error, as CachedReader's.
func (s *ClusterSet) CacheHealth(cluster string, gvr schema.GroupVersionResource) (time.Time, error) {
	ic, err := s.informer(cluster, gvr)
	if err != nil {
		return time.Time{}, err
	}
	since, err := ic.health(s.opts.Clock.Now())
	if err != nil {
		return since, wrapErr(fmt.Sprintf("cache of %s in cluster %q", gvr.GroupResource(), cluster), err)
	}
	return since, nil
}

// waitForSync blocks until the informer has synced or ctx is done.
func (ic *informerCache) waitForSync(ctx context.Context, op string) error {
	if ic.inf.HasSynced() {
		return nil
	}
	// Wait for the first list, unless the member has answered in a way that waiting will not
	// change soon: it does not serve the resource (its CRD is not installed), refuses it, or
	// cannot be reached (refused connections, untrusted certificates: what a live read fails
	// with at once too). The reader then fails at once with that answer, as a live read
	// would, instead of holding the caller until its deadline (a loop's pass may have none);
	// the informer keeps retrying meanwhile.
	_ = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		err := ic.err()
		return ic.inf.HasSynced() || definitive(err) || errors.Is(err, federation.ErrUnreachable), nil
	})
	if ic.inf.HasSynced() {
		return nil
	}
	if last := ic.err(); last != nil {
		return wrapErr(op+": cache not synced", last)
	}
	return fmt.Errorf("kube: %s: cache not synced: %w", op, ctx.Err())
}

// informer returns the running informer of gvr in cluster, starting it if needed.
func (s *ClusterSet) informer(cluster string, gvr schema.GroupVersionResource) (*informerCache, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		return nil, fmt.Errorf("kube: cached reader of %s in cluster %q: %w", gvr.GroupResource(), cluster, ErrNotRunning)
	}
	m := s.members[cluster]
	switch {
	case m == nil:
		return nil, fmt.Errorf("kube: cluster %q: %w", cluster, federation.ErrClusterNotFound)
	case m.client == nil:
		return nil, fmt.Errorf("kube: cluster %q: %w: %w", cluster, federation.ErrClusterNotReady, m.notReady)
	}
	if m.caches == nil {
		ctx, cancel := context.WithCancel(s.run.ctx)
		m.caches = &memberCaches{ctx: ctx, cancel: cancel, informers: map[schema.GroupVersionResource]*informerCache{}}
	}
	if ic := m.caches.informers[gvr]; ic != nil {
		return ic, nil
	}
	// loop.NewInformer lists without streaming, so a failing list reaches the handler below
	// and readers can say why they are not synced.
	ic := &informerCache{}
	ic.inf = loop.NewInformer(contactClient{ClusterClient: m.client, ic: ic, clock: s.opts.Clock}, gvr, metav1.NamespaceAll, ManagedSelector)
	// The handler only records the error for readers; the reflector retries with backoff.
	_ = ic.inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		ic.setErr(err)
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if _, err := ic.inf.AddEventHandler(s.handlers.dispatch(cluster, gvr)); err != nil {
		return nil, fmt.Errorf("kube: cached reader of %s in cluster %q: %w", gvr.GroupResource(), cluster, err)
	}
	m.caches.informers[gvr] = ic
	ctx := m.caches.ctx
	s.run.wg.Go(func() { ic.inf.RunWithContext(ctx) })
	return ic, nil
}

// cachedReader is the handle CachedReader returns. It looks its informer up on every call, so
// it keeps working across client rebuilds.
type cachedReader struct {
	set     *ClusterSet
	cluster string
	gvr     schema.GroupVersionResource
}

// synced returns the informer of gvr, the one this reader serves, once it has synced (or
// ctx ends); op names the read in errors.
func (r *cachedReader) synced(ctx context.Context, gvr schema.GroupVersionResource, op string) (*informerCache, error) {
	if gvr != r.gvr {
		return nil, fmt.Errorf("kube: %s: %w: this cached reader serves %s only", op, federation.ErrUnknownType, r.gvr)
	}
	ic, err := r.set.informer(r.cluster, gvr)
	if err != nil {
		return nil, err
	}
	if err := ic.waitForSync(ctx, op); err != nil {
		return nil, err
	}
	return ic, nil
}

// Get returns a copy of the cached object, or an error satisfying apierrors.IsNotFound.
func (r *cachedReader) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	op := describe("get (cached)", gvr, namespace, name)
	ic, err := r.synced(ctx, gvr, op)
	if err != nil {
		return nil, err
	}
	u, err := loop.GetFromCache(ic.inf, gvr, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("kube: %s: %w", op, err)
	}
	return u, nil
}

// View implements loop.Viewer: Get without the copy. The object is the cache's: the caller
// must not change it.
func (r *cachedReader) View(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	op := describe("get (cached)", gvr, namespace, name)
	ic, err := r.synced(ctx, gvr, op)
	if err != nil {
		return nil, err
	}
	u, err := loop.ViewFromCache(ic.inf, gvr, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("kube: %s: %w", op, err)
	}
	return u, nil
}

// ViewList implements loop.Viewer: List without the copies. The objects are the cache's: the
// caller must not change them.
func (r *cachedReader) ViewList(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	op := describe("list (cached)", gvr, namespace, "")
	ic, err := r.synced(ctx, gvr, op)
	if err != nil {
		return nil, err
	}
	l, err := loop.ViewListFromCache(ic.inf, gvr, namespace, opts)
	if err != nil {
		return nil, fmt.Errorf("kube: %s: %w", op, err)
	}
	return l, nil
}

var _ loop.Viewer = (*cachedReader)(nil)

// ResourceVersion implements federation.VersionReader: Get without the copy.
func (r *cachedReader) ResourceVersion(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (string, error) {
	u, err := r.View(ctx, gvr, namespace, name)
	if err != nil {
		return "", err
	}
	return u.GetResourceVersion(), nil
}

var _ federation.VersionReader = (*cachedReader)(nil)

// List returns copies of the cached objects in namespace ("" = all) that match
// opts.LabelSelector and opts.FieldSelector (metadata.name and metadata.namespace), sorted by
// namespace and name. The list's resourceVersion is the cache's.
func (r *cachedReader) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	op := describe("list (cached)", gvr, namespace, "")
	ic, err := r.synced(ctx, gvr, op)
	if err != nil {
		return nil, err
	}
	l, err := loop.ListFromCache(ic.inf, gvr, namespace, opts)
	if err != nil {
		return nil, fmt.Errorf("kube: %s: %w", op, err)
	}
	return l, nil
}
