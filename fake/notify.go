package fake

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/federation"
)

// The cluster's side of the member caches of [Fleet.CachedReader]: which resources have a
// cache, the state a partition freezes, and the change notifications that writes queue under
// the cluster's lock and unlock delivers outside it.

// memberCache is the cache of one resource of a member cluster.
type memberCache struct {
	// frozen is the cache's view while the cluster is partitioned: its managed objects as
	// they were when the partition began, at resourceVersion frozenRV. nil while connected.
	frozen   map[objectKey]*unstructured.Unstructured
	frozenRV int64
	// synced is closed once the cache has seen the member: at once, or at Heal for a cache
	// started while the member was partitioned, whose reads wait until then.
	synced chan struct{}
}

// change is one notification for the handlers of [Fleet.OnMemberChange]. obj is shared with
// the store and never mutated; each handler gets its own copy, but for the read-only ones
// ([Fleet.OnMemberChangeReadOnly]).
type change struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

// managed reports whether the federation manages obj: it carries ManagedByLabel, whatever
// its value.
func managed(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetLabels()[federation.ManagedByLabel]
	return ok
}

// startCacheLocked starts the cache of gvr, once.
func (c *Cluster) startCacheLocked(gvr schema.GroupVersionResource) {
	if c.caches == nil {
		c.caches = map[schema.GroupVersionResource]*memberCache{}
	}
	if _, ok := c.caches[gvr]; ok {
		return
	}
	mc := &memberCache{synced: make(chan struct{})}
	if c.partitioned {
		mc.frozen, mc.frozenRV = map[objectKey]*unstructured.Unstructured{}, c.rv
	} else {
		close(mc.synced)
	}
	c.caches[gvr] = mc
}

// notifyLocked queues the notification a committed event makes, as a label-selected informer
// of managed objects sees it: an object that is or becomes managed is notified as it is now,
// and one deleted or no longer managed in its last managed state. Nothing is queued for a
// resource without a cache, nor while the cluster is partitioned (the cache is frozen; Heal
// sends the differences).
func (c *Cluster) notifyLocked(e event) {
	if c.fleet == nil || c.partitioned || c.caches[e.gvr] == nil {
		return
	}
	switch {
	case e.typ == watch.Deleted:
		if managed(e.obj) {
			c.pending = append(c.pending, change{e.gvr, e.obj})
		}
	case managed(e.obj):
		c.pending = append(c.pending, change{e.gvr, e.obj})
	case e.old != nil && managed(e.old):
		gone := e.old.DeepCopy()
		gone.SetResourceVersion(strconv.FormatInt(e.rv, 10))
		c.pending = append(c.pending, change{e.gvr, gone})
	}
}

// freezeCachesLocked keeps each cache's current view, for a partition.
func (c *Cluster) freezeCachesLocked() {
	for gvr, mc := range c.caches {
		mc.frozen, mc.frozenRV = c.managedLocked(gvr), c.rv
	}
}

// thawCachesLocked ends a partition: each cache is synced again, and the handlers are
// notified of what changed while it was frozen, in namespace and name order: objects added or
// changed in their current state, objects gone in their frozen state.
func (c *Cluster) thawCachesLocked() {
	for _, gvr := range slices.SortedFunc(maps.Keys(c.caches), compareGVRs) {
		mc := c.caches[gvr]
		if mc.frozen == nil {
			continue
		}
		now := c.managedLocked(gvr)
		keys := slices.Collect(maps.Keys(now))
		for k := range mc.frozen {
			if _, ok := now[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, compareKeys)
		for _, k := range keys {
			before, cur := mc.frozen[k], now[k]
			switch {
			case cur == nil:
				c.pending = append(c.pending, change{gvr, before})
			case before == nil || before.GetResourceVersion() != cur.GetResourceVersion():
				c.pending = append(c.pending, change{gvr, cur})
			}
		}
		mc.frozen = nil
		select {
		case <-mc.synced:
		default:
			close(mc.synced)
		}
	}
	if c.fleet == nil {
		c.pending = nil
	}
}

// managedLocked returns the stored managed objects of gvr (shared, never mutated).
func (c *Cluster) managedLocked(gvr schema.GroupVersionResource) map[objectKey]*unstructured.Unstructured {
	out := map[objectKey]*unstructured.Unstructured{}
	for k, obj := range c.objects[gvr] {
		if managed(obj) {
			out[k] = obj
		}
	}
	return out
}

// unlock releases c.mu after delivering the pending notifications to the fleet's handlers,
// outside the lock, in commit order. When another goroutine is already delivering (a
// concurrent writer, or a handler writing to this cluster), that goroutine delivers these
// too, after its own, before it returns. Every writing method ends with it.
func (c *Cluster) unlock() {
	if c.delivering || len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	c.delivering = true
	defer func() { // also when a handler panics
		c.delivering = false
		c.mu.Unlock()
	}()
	for len(c.pending) > 0 {
		batch, f := c.pending, c.fleet
		c.pending = nil
		func() {
			c.mu.Unlock()
			defer c.mu.Lock()
			if f != nil {
				f.dispatch(c.name, batch)
			}
		}()
	}
}

func compareGVRs(a, b schema.GroupVersionResource) int {
	if a.Group != b.Group {
		return cmp.Compare(a.Group, b.Group)
	}
	if a.Resource != b.Resource {
		return cmp.Compare(a.Resource, b.Resource)
	}
	return cmp.Compare(a.Version, b.Version)
}
