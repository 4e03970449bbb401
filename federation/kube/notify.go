package kube

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/fedkit/fedkit/federation"
)

var (
	_ federation.MemberCache           = (*ClusterSet)(nil)
	_ federation.ReadOnlyMemberChanges = (*ClusterSet)(nil)
)

// OnMemberChange calls fn with the cluster's name and a copy of the object each time a
// managed object (one labelled federation.ManagedByLabel, see ManagedSelector) of gvr is
// added, changed or deleted in a cluster whose cached reader of gvr runs. Deleted objects
// are passed in their last known state. fn is registered with every such informer, those
// running now and those started later (by CachedReader, or after a client rebuild), so a
// loop registers once, before or after its first CachedReader call. OnMemberChange starts no
// informer itself.
//
// When an informer starts, fn sees every object of its first list as added. fn runs on the
// informer's goroutine: it must be quick and must not block (add to a queue). The returned
// func removes fn: once it returns, fn is not running and is not called again. It must not
// be called from fn itself.
//
// OnMemberChange implements federation.MemberCache, with CachedReader.
func (s *ClusterSet) OnMemberChange(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) (remove func()) {
	return s.handlers.add(gvr, fn, false)
}

// OnMemberChangeReadOnly is OnMemberChange with the informer's own object instead of a copy
// for each call: fn must not modify it (the informer's cache holds it, and every other
// handler gets it too), nor keep it beyond the call. It implements
// federation.ReadOnlyMemberChanges.
func (s *ClusterSet) OnMemberChangeReadOnly(gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) (remove func()) {
	return s.handlers.add(gvr, fn, true)
}

// memberHandlers are the functions registered by OnMemberChange, per resource. The slices are
// replaced, never changed in place, so a dispatch can range over the one it read. A zero
// memberHandlers is ready.
type memberHandlers struct {
	mu    sync.Mutex
	byGVR map[schema.GroupVersionResource][]*memberHandler
}

// memberHandler is one registered function. Calls hold mu for reading and removal holds it
// for writing, so removal waits for calls in flight.
type memberHandler struct {
	mu      sync.RWMutex
	removed bool
	fn      func(cluster string, obj *unstructured.Unstructured)
	// readOnly handlers get the informer's object itself (OnMemberChangeReadOnly).
	readOnly bool
}

func (h *memberHandlers) add(gvr schema.GroupVersionResource, fn func(string, *unstructured.Unstructured), readOnly bool) func() {
	mh := &memberHandler{fn: fn, readOnly: readOnly}
	h.mu.Lock()
	if h.byGVR == nil {
		h.byGVR = map[schema.GroupVersionResource][]*memberHandler{}
	}
	h.byGVR[gvr] = append(slices.Clone(h.byGVR[gvr]), mh)
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mh.mu.Lock()
			mh.removed = true
			mh.mu.Unlock()
			h.mu.Lock()
			defer h.mu.Unlock()
			h.byGVR[gvr] = slices.DeleteFunc(slices.Clone(h.byGVR[gvr]), func(x *memberHandler) bool { return x == mh })
		})
	}
}

// dispatch is the event handler of the informer of gvr in cluster: it calls every function
// registered for gvr at the time of the event.
func (h *memberHandlers) dispatch(cluster string, gvr schema.GroupVersionResource) cache.ResourceEventHandler {
	notify := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		h.mu.Lock()
		handlers := h.byGVR[gvr]
		h.mu.Unlock()
		for _, mh := range handlers {
			mh.call(cluster, u)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	}
}

func (mh *memberHandler) call(cluster string, u *unstructured.Unstructured) {
	mh.mu.RLock()
	defer mh.mu.RUnlock()
	switch {
	case mh.removed:
	case mh.readOnly:
		mh.fn(cluster, u)
	default:
		mh.fn(cluster, u.DeepCopy())
	}
}
