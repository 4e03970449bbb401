package fake

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// event is one write, kept in the cluster's history so watches can resume from an old
// resourceVersion. obj is the object as stored by the write (for Deleted: its last state);
// old is the state before it (nil for Added). Both are shared and never mutated.
type event struct {
	rv       int64
	gvr      schema.GroupVersionResource
	typ      watch.EventType
	obj, old *unstructured.Unstructured
}

// history is a bounded log of events in resourceVersion order, a ring of at most limit
// events. compacted is the resourceVersion of the newest event dropped; a watch must start at
// or after it.
type history struct {
	limit     int
	buf       []event // the ring: once full, buf[start] is the oldest event
	start     int
	compacted int64
}

func (h *history) at(i int) event { return h.buf[(h.start+i)%len(h.buf)] }

func (h *history) add(e event) {
	if len(h.buf) < h.limit {
		h.buf = append(h.buf, e) // still filling: start is 0
		return
	}
	h.compacted = h.buf[h.start].rv
	h.buf[h.start] = e
	h.start = (h.start + 1) % len(h.buf)
}

// resize keeps the newest limit events.
func (h *history) resize(limit int) {
	events := make([]event, len(h.buf))
	for i := range events {
		events[i] = h.at(i)
	}
	if over := len(events) - limit; over > 0 {
		h.compacted = events[over-1].rv
		events = events[over:]
	}
	h.limit, h.buf, h.start = limit, events, 0
}

// since returns the events after rv, or false when some of them were already dropped.
func (h *history) since(rv int64) ([]event, bool) {
	if rv < h.compacted {
		return nil, false
	}
	first := sort.Search(len(h.buf), func(i int) bool { return h.at(i).rv > rv })
	out := make([]event, 0, len(h.buf)-first)
	for i := first; i < len(h.buf); i++ {
		out = append(out, h.at(i))
	}
	return out, true
}

// filter is a namespace plus label and field selectors, as List and Watch take them.
type filter struct {
	namespace string // "" = all
	labels    labels.Selector
	fields    fields.Selector
}

// newFilter parses opts. Only the metadata.name and metadata.namespace field selectors are
// supported, as for custom resources on a real server.
func newFilter(ri resourceInfo, namespace string, opts metav1.ListOptions) (filter, error) {
	f := filter{namespace: namespace}
	if !ri.namespaced {
		f.namespace = ""
	}
	var err error
	if f.labels, err = labels.Parse(opts.LabelSelector); err != nil {
		return f, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	if f.fields, err = fields.ParseSelector(opts.FieldSelector); err != nil {
		return f, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	for _, r := range f.fields.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return f, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
		}
	}
	return f, nil
}

func (f filter) matches(u *unstructured.Unstructured) bool {
	if f.namespace != "" && u.GetNamespace() != f.namespace {
		return false
	}
	return f.labels.Matches(labels.Set(u.GetLabels())) &&
		f.fields.Matches(fields.Set{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace()})
}

// startWatchLocked registers a watch and starts its delivery goroutine, which ends when the
// watch is stopped, ctx is done, or the cluster is partitioned.
func (c *Cluster) startWatchLocked(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	ri, err := c.servedLocked(gvr, "watch")
	if err != nil {
		return nil, err
	}
	f, err := newFilter(ri, namespace, opts)
	if err != nil {
		return nil, err
	}
	w := &watcher{
		c: c, gvr: gvr, filter: f,
		result: make(chan watch.Event),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		finish: make(chan struct{}),
		wake:   make(chan struct{}, 1),
	}
	initial := opts.SendInitialEvents == nil || *opts.SendInitialEvents
	switch opts.ResourceVersion {
	case "", "0":
		// Like the real server: synthetic Added events for the current state, then changes.
		if initial {
			c.initialEventsLocked(w)
		}
	default:
		rv, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil || rv < 0 {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", opts.ResourceVersion))
		}
		events, ok := c.hist.since(rv)
		if !ok {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, c.hist.compacted+1))
		}
		for _, e := range events {
			w.offer(e)
		}
	}
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		w.push(watch.Event{Type: watch.Bookmark, Object: c.bookmarkLocked(gvr, ri.kind)})
	}
	c.watch[w] = struct{}{}
	go w.run(ctx)
	return w, nil
}

func (c *Cluster) initialEventsLocked(w *watcher) {
	stored := c.objects[w.gvr]
	keys := make([]objectKey, 0, len(stored))
	for k := range stored {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		if obj := stored[k]; w.filter.matches(obj) {
			w.push(watch.Event{Type: watch.Added, Object: obj})
		}
	}
}

// bookmarkLocked is the bookmark that ends the initial events of a watch-list request.
func (c *Cluster) bookmarkLocked(gvr schema.GroupVersionResource, kind string) *unstructured.Unstructured {
	b := &unstructured.Unstructured{Object: map[string]any{}}
	b.SetAPIVersion(gvr.GroupVersion().String())
	b.SetKind(kind)
	b.SetResourceVersion(strconv.FormatInt(c.rv, 10))
	b.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	return b
}

// publishLocked records e and hands it to every matching watch.
func (c *Cluster) publishLocked(e event) {
	c.hist.add(e)
	for w := range c.watch {
		w.offer(e)
	}
}

// closeWatchesLocked ends every open watch, as a broken connection would.
func (c *Cluster) closeWatchesLocked() {
	for w := range c.watch {
		w.signal()
	}
}

func (c *Cluster) removeWatch(w *watcher) {
	c.lock()
	defer c.mu.Unlock()
	delete(c.watch, w)
}

// watcher is one open watch. Writers queue events under the cluster lock without blocking; a
// goroutine per watch copies them out to the result channel, so a slow reader delays only
// itself.
type watcher struct {
	c      *Cluster
	gvr    schema.GroupVersionResource
	filter filter

	result   chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	// finish ends the watch once its queued events are delivered: the server closing it
	// (its resource is no longer served), where stop is the connection breaking.
	finish     chan struct{}
	finishOnce sync.Once

	mu    sync.Mutex
	queue []watch.Event // objects are shared; run copies them before sending
	wake  chan struct{}
}

// ResultChan returns the events. It is closed when the watch ends.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch and waits for its goroutine to exit. It may be called more than once.
func (w *watcher) Stop() {
	w.signal()
	<-w.done
}

func (w *watcher) signal() { w.stopOnce.Do(func() { close(w.stop) }) }

func (w *watcher) end() { w.finishOnce.Do(func() { close(w.finish) }) }

// offer queues e if this watch sees it. Objects moving into the selector are Added and objects
// moving out are Deleted, as the real watch cache reports them.
func (w *watcher) offer(e event) {
	if e.gvr != w.gvr {
		return
	}
	now := w.filter.matches(e.obj)
	switch e.typ {
	case watch.Added, watch.Deleted:
		if now {
			w.push(watch.Event{Type: e.typ, Object: e.obj})
		}
	case watch.Modified:
		before := e.old != nil && w.filter.matches(e.old)
		switch {
		case now && before:
			w.push(watch.Event{Type: watch.Modified, Object: e.obj})
		case now:
			w.push(watch.Event{Type: watch.Added, Object: e.obj})
		case before:
			gone := e.old.DeepCopy()
			gone.SetResourceVersion(strconv.FormatInt(e.rv, 10))
			w.push(watch.Event{Type: watch.Deleted, Object: gone})
		}
	}
}

func (w *watcher) push(ev watch.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.done)
	defer close(w.result)
	defer w.c.removeWatch(w)
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-w.finish:
				w.mu.Lock()
				empty := len(w.queue) == 0
				w.mu.Unlock()
				if empty {
					return
				}
				continue
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			}
		}
		ev := w.queue[0]
		w.queue[0] = watch.Event{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			ev.Object = u.DeepCopy() // the reader owns what it receives
		}
		select {
		case w.result <- ev:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}
