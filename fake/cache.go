package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

var (
	_ federation.MemberCache           = (*Fleet)(nil)
	_ federation.ReadOnlyMemberChanges = (*Fleet)(nil)
	_ federation.MemberCacheHealth     = (*Fleet)(nil)
)

// CacheHealth implements [federation.MemberCacheHealth]. A member's caches are in contact
// with it (nil, and the fleet's clock's now) unless it is partitioned: then they are frozen,
// and CacheHealth returns the partition's error (wrapping federation.ErrUnreachable) and the
// moment the partition began. An unknown cluster is an error satisfying
// errors.Is(err, federation.ErrClusterNotFound), with a zero time.
func (f *Fleet) CacheHealth(cluster string, gvr schema.GroupVersionResource) (time.Time, error) {
	c, ok := f.Member(cluster)
	if !ok {
		return time.Time{}, fmt.Errorf("fake: fleet: cache health of %q: %w", cluster, federation.ErrClusterNotFound)
	}
	c.lock()
	defer c.mu.Unlock()
	if !c.partitioned {
		return c.clock.Now(), nil
	}
	return c.readySince, fmt.Errorf("fake: the cache of %s in %q is cut off: %w", gvr.Resource, cluster, unreachable(c.name, Action{Verb: VerbWatch, Resource: gvr}))
}

// CachedReader implements [federation.MemberCache]: a Reader of the managed objects (those
// carrying federation.ManagedByLabel, whatever its value) of gvr in member cluster, as an
// informer's cache would serve them. The cache of a (cluster, gvr) starts with the first call.
//
// Its reads come from the member's store as it is: they record no [Action], and no fault,
// latency or hook applies, because a cache read is not an API call. While the member is
// partitioned the cache keeps serving the state it had when the partition began, as an
// informer keeps its last state, and it follows the member again at Heal. A cache started
// while the member is partitioned has not synced: its reads fail at once with the partition's
// error (federation.ErrUnreachable), as federation/kube's do once the informer's list failed,
// until Heal. Objects without the label are NotFound to Get and
// absent from List; a resource the member does not serve is the member's 404. An unknown
// cluster is an error satisfying errors.Is(err, federation.ErrClusterNotFound).
func (f *Fleet) CachedReader(cluster string, gvr schema.GroupVersionResource) (federation.Reader, error) {
	c, ok := f.Member(cluster)
	if !ok {
		return nil, fmt.Errorf("fake: fleet: cached reader of %q: %w", cluster, federation.ErrClusterNotFound)
	}
	c.lock()
	c.startCacheLocked(gvr)
	c.mu.Unlock()
	return cachedReader{c: c, gvr: gvr}, nil
}

// OnMemberChange implements [federation.MemberCache]. fn is called with the member's name and
// its own copy of the object each time a write to a member commits a change to a managed
// object of gvr (added, changed, deleted, or gaining or losing the label), for the members
// whose cache of gvr was started by [Fleet.CachedReader]. Deleted objects, and objects that
// lost the label, come in their last managed state.
//
// Every write counts: the code under test's, [Cluster.Seed], [Cluster.Drift],
// [Cluster.DriftDelete] and the simulated controllers'. While a member is partitioned its
// cache is frozen and nothing is notified; at Heal fn gets what differs between the frozen
// state and the member's: changed and new objects as they are, vanished ones as they were.
//
// fn runs on the writer's goroutine, after the write commits and before the write returns,
// outside every lock of the fleet, in the member's commit order. When another goroutine is
// delivering notifications of that member at that moment (concurrent writers, or fn itself
// writing to the member), that goroutine calls fn instead, in order, before it returns. The
// handlers of a fleet are called in the order they were added. fn must not block.
//
// remove stops the calls: once it returns, fn is not called again. It waits for calls of fn
// running on other goroutines, so fn must not call it.
func (f *Fleet) OnMemberChange(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) (remove func()) {
	return f.onMemberChange(gvr, fn, false)
}

// OnMemberChangeReadOnly implements [federation.ReadOnlyMemberChanges]: OnMemberChange, with
// the object as the member's store holds it instead of a copy for each call. The object is
// shared with the store and with every other handler: fn must not modify it, nor keep it
// beyond the call. The store never changes a stored object in place (a write stores a new
// one), so what fn reads stays as it was notified.
func (f *Fleet) OnMemberChangeReadOnly(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) (remove func()) {
	return f.onMemberChange(gvr, fn, true)
}

func (f *Fleet) onMemberChange(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured), readOnly bool) (remove func()) {
	h := &changeHandler{gvr: gvr, fn: fn, readOnly: readOnly}
	h.idle = sync.NewCond(&h.mu)
	f.hmu.Lock()
	f.handlers = append(f.handlers, h)
	f.hmu.Unlock()
	return func() {
		f.hmu.Lock()
		f.handlers = slices.DeleteFunc(f.handlers, func(x *changeHandler) bool { return x == h })
		f.hmu.Unlock()
		h.mu.Lock()
		defer h.mu.Unlock()
		h.removed = true
		for h.running > 0 {
			h.idle.Wait()
		}
	}
}

// changeHandler is one OnMemberChange registration.
type changeHandler struct {
	gvr schema.GroupVersionResource
	fn  func(cluster string, obj *unstructured.Unstructured)
	// readOnly handlers get the stored object itself (OnMemberChangeReadOnly).
	readOnly bool

	mu      sync.Mutex
	idle    *sync.Cond // signalled when running drops to 0
	removed bool
	running int
}

func (h *changeHandler) call(cluster string, obj *unstructured.Unstructured) {
	h.mu.Lock()
	if h.removed {
		h.mu.Unlock()
		return
	}
	h.running++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.running--; h.running == 0 {
			h.idle.Broadcast()
		}
		h.mu.Unlock()
	}()
	h.fn(cluster, obj)
}

// dispatch calls the handlers for a batch of a member's notifications. The caller holds no
// lock.
func (f *Fleet) dispatch(cluster string, batch []change) {
	f.hmu.Lock()
	handlers := slices.Clone(f.handlers)
	f.hmu.Unlock()
	for _, ch := range batch {
		for _, h := range handlers {
			switch {
			case h.gvr != ch.gvr:
			case h.readOnly:
				h.call(cluster, ch.obj)
			default:
				h.call(cluster, ch.obj.DeepCopy())
			}
		}
	}
}

var _ federation.VersionReader = cachedReader{}

// cachedReader is the Reader CachedReader returns.
type cachedReader struct {
	c   *Cluster
	gvr schema.GroupVersionResource
}

// lockSynced returns once the cache has synced, with the cluster's lock held, or ctx.Err()
// without it. A synced cache (the usual case) costs one lock.
func (r cachedReader) lockSynced(ctx context.Context, gvr schema.GroupVersionResource) error {
	if gvr != r.gvr {
		return apierrors.NewBadRequest(fmt.Sprintf("fake: the cached reader of %s in cluster %q cannot read %s", r.gvr, r.c.name, gvr))
	}
	for {
		r.c.lock()
		mc := r.c.caches[r.gvr]
		if mc == nil { // the member left the fleet: the cache stays as it is
			return nil
		}
		select {
		case <-mc.synced:
			return nil
		default:
		}
		partitioned := r.c.partitioned
		r.c.mu.Unlock()
		if partitioned {
			// As a real informer's reader: its list failed, and waiting will not soon change
			// that; fail at once, as a live read would.
			return fmt.Errorf("fake: cached reader of %s in cluster %q: cache not synced: %w", gvr.Resource, r.c.name, unreachable(r.c.name, Action{Verb: VerbList, Resource: gvr}))
		}
		select {
		case <-mc.synced:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ResourceVersion implements federation.VersionReader: Get without the copy.
func (r cachedReader) ResourceVersion(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (string, error) {
	if err := r.lockSynced(ctx, gvr); err != nil {
		return "", err
	}
	c := r.c
	defer c.mu.Unlock()
	ri, err := c.servedLocked(gvr, "get")
	if err != nil {
		return "", err
	}
	if !ri.namespaced {
		namespace = ""
	}
	var obj *unstructured.Unstructured
	if mc := c.caches[gvr]; mc != nil && mc.frozen != nil {
		obj = mc.frozen[objectKey{namespace, name}]
	} else {
		obj = c.objects[gvr][objectKey{namespace, name}]
	}
	if obj == nil || !managed(obj) {
		return "", apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return obj.GetResourceVersion(), nil
}

// Get implements federation.Reader.
func (r cachedReader) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if err := r.lockSynced(ctx, gvr); err != nil {
		return nil, err
	}
	c := r.c
	defer c.mu.Unlock()
	if mc := c.caches[gvr]; mc != nil && mc.frozen != nil {
		ri, _ := c.servedLocked(gvr, "")
		if !ri.namespaced {
			namespace = ""
		}
		if obj, ok := mc.frozen[objectKey{namespace, name}]; ok {
			return obj.DeepCopy(), nil
		}
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	obj, err := c.getLocked(gvr, namespace, name)
	if err != nil {
		return nil, err
	}
	if !managed(obj) {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return obj, nil
}

// List implements federation.Reader: the managed objects matching namespace and opts, sorted
// by namespace and name, with the resourceVersion the cache is at.
func (r cachedReader) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if err := r.lockSynced(ctx, gvr); err != nil {
		return nil, err
	}
	c := r.c
	defer c.mu.Unlock()
	mc := c.caches[gvr]
	if mc == nil || mc.frozen == nil {
		list, err := c.listLocked(gvr, namespace, opts)
		if err != nil {
			return nil, err
		}
		list.Items = slices.DeleteFunc(list.Items, func(u unstructured.Unstructured) bool { return !managed(&u) })
		return list, nil
	}
	ri, _ := c.servedLocked(gvr, "")
	f, err := newFilter(ri, namespace, opts)
	if err != nil {
		return nil, err
	}
	return listOf(mc.frozen, gvr, ri, f, mc.frozenRV), nil
}
