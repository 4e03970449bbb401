package loop

import (
	"errors"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// errInformerStopped is what adding a handler to a stopped informer returns, as client-go's
// own AddEventHandler refuses one.
var errInformerStopped = errors.New("the informer has stopped")

// fanout is the one client-go event handler of a Cache's informer. It hands each
// notification to the handlers of every loop using the informer, in the order the informer
// delivers them, in the goroutines of one client-go listener: client-go runs two goroutines
// and a buffer per handler, and a default control plane has about 170 handlers on some 25
// informers. The loops' handlers only filter and enqueue keys, so one running after another
// costs nothing a separate goroutine would save.
type fanout struct {
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration // the fanout's own, at client-go

	mu       sync.RWMutex // held for reading while a notification is handed out
	handlers map[*fanoutHandler]struct{}
}

// fanoutHandler is one handler added to a fanout: its registration.
type fanoutHandler struct {
	cache.ResourceEventHandler
	f *fanout
}

// HasSynced reports whether the informer has synced and the handler has been handed every
// object of its first list. A handler added to a fanout is handed the informer's store when
// it is added, so it has synced when the fanout's own client-go registration has.
func (h *fanoutHandler) HasSynced() bool { return h.f.reg.HasSynced() }

// HasSyncedChecker is HasSynced's channel.
func (h *fanoutHandler) HasSyncedChecker() cache.DoneChecker { return h.f.reg.HasSyncedChecker() }

// newFanout registers a fanout as the one handler of inf.
func newFanout(inf cache.SharedIndexInformer) (*fanout, error) {
	f := &fanout{informer: inf, handlers: map[*fanoutHandler]struct{}{}}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			f.each(func(h cache.ResourceEventHandler) { h.OnAdd(obj, initial) })
		},
		UpdateFunc: func(old, obj any) {
			f.each(func(h cache.ResourceEventHandler) { h.OnUpdate(old, obj) })
		},
		DeleteFunc: func(obj any) {
			f.each(func(h cache.ResourceEventHandler) { h.OnDelete(obj) })
		},
	})
	if err != nil {
		return nil, err
	}
	f.reg = reg
	return f, nil
}

func (f *fanout) each(call func(cache.ResourceEventHandler)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for h := range f.handlers {
		call(h.ResourceEventHandler)
	}
}

// add adds h and hands it every object of the informer's store as an add from the initial
// list, as client-go does for a handler added to a running informer. No notification is
// handed out meanwhile: those that follow are of changes the store has or is about to have,
// so h may see a change it was handed already (a handler that enqueues keys cannot tell),
// never miss one. h runs in the caller's goroutine meanwhile: the caller must hold no lock h
// takes.
func (f *fanout) add(h cache.ResourceEventHandler) (*fanoutHandler, error) {
	if f.informer.IsStopped() {
		return nil, errInformerStopped
	}
	reg := &fanoutHandler{ResourceEventHandler: h, f: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[reg] = struct{}{}
	for _, obj := range f.informer.GetStore().List() {
		h.OnAdd(obj, true)
	}
	return reg, nil
}

// remove removes the handler of h; it is handed nothing once remove returns.
func (f *fanout) remove(h *fanoutHandler) {
	if h == nil || h.f != f {
		return
	}
	f.mu.Lock()
	delete(f.handlers, h)
	f.mu.Unlock()
}
