package statuswrite

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
)

// DefaultWindow is how long a change waits for the other loops' changes to the same object.
const DefaultWindow = 2 * time.Second

// maxHolds bounds how long changes that keep arriving hold an object's write: maxHolds
// windows after the first.
const maxHolds = 5

// maxSyncHolds bounds how long changes to a generation sync has not recorded yet wait for
// sync's: maxSyncHolds windows after the first. Sync's queue can be seconds behind the
// scheduler's when thousands of objects arrive at once.
const maxSyncHolds = 15

// conflictRetries bounds how often one flush reads the object again after a Conflict.
const conflictRetries = 3

// finalFlushTimeout bounds the last writes Run makes once its context is done.
const finalFlushTimeout = 10 * time.Second

// keepWritten bounds how long the Writer keeps the host's answer to a write no loop has read
// back: keepWritten windows. What it keeps is then bounded by the writes of the last few
// windows, not by the number of objects it ever wrote (a full copy of each, else).
const keepWritten = 5

// maxFailures bounds how often an object's write fails before its changes are dropped (the
// loops' next passes hand them again).
const maxFailures = 5

// Options configure a Writer. The zero value is the default.
type Options struct {
	// Window is how long the first change to an object waits before the write; 0 means
	// DefaultWindow.
	Window time.Duration
	// Clock times the window; nil means the real clock.
	Clock clock.WithTicker
	// Logger logs failed writes.
	Logger logr.Logger
}

// Writer merges the status changes of several loops to one object into one write.
type Writer struct {
	host federation.ClusterClient
	opts Options

	mu      gosync.Mutex
	pending map[objKey]*entry
	// flying are the entries whose write is on its way to the host: taken off pending, their
	// result not in written yet. What they carry is part of what loops read meanwhile.
	flying  map[objKey]*entry
	written map[objKey]writtenCopy // the last write's result, until read back (see freshest)
	// expiry lists the written copies in the order they were written (so by time), for Run to
	// forget them keepWritten windows later; a copy forgotten earlier, or replaced, is skipped.
	expiry []expiring
	subs   map[schema.GroupVersionResource]map[*sub]struct{}
	wake   chan struct{}
	// drops counts Drop's calls: a write on its way when Drop is called neither comes back
	// into pending when it fails nor leaves its result in written.
	drops int
}

type objKey struct {
	gvr schema.GroupVersionResource
	key federation.Key
}

type mutation struct {
	loop  string
	apply func(map[string]any) error
}

// entry is one object's pending write: the newest copy known, the mutations in arrival order,
// and what they make of it.
type entry struct {
	base     *unstructured.Unstructured
	muts     []mutation
	view     *unstructured.Unstructured
	first    time.Time // when the first change arrived (or sync's, after forSync)
	forSync  bool      // the changes wait for sync's (waitsForSync)
	due      time.Time
	failures int
}

// writtenCopy is the host's answer to the Writer's last write of an object, and when it came.
type writtenCopy struct {
	obj *unstructured.Unstructured
	at  time.Time
}

// expiring is one written copy to forget once its time comes: the copy of k written at at.
type expiring struct {
	k  objKey
	at time.Time
}

type sub struct {
	loop string
	fn   func(string, federation.Key)
}

var _ federation.StatusWriter = (*Writer)(nil)

// New returns a Writer writing through host. Run writes.
func New(host federation.ClusterClient, opts Options) *Writer {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Writer{
		host:    host,
		opts:    opts,
		pending: map[objKey]*entry{},
		flying:  map[objKey]*entry{},
		written: map[objKey]writtenCopy{},
		subs:    map[schema.GroupVersionResource]map[*sub]struct{}{},
		wake:    make(chan struct{}, 1),
	}
}

// newer reports whether a's resourceVersion is after b's. resourceVersions are opaque to
// clients, but both kube-apiserver (etcd revisions) and the fake count up: when either does
// not parse, a is taken as newer.
func newer(a, b *unstructured.Unstructured) bool {
	ra, errA := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	rb, errB := strconv.ParseUint(b.GetResourceVersion(), 10, 64)
	if errA != nil || errB != nil {
		return a.GetResourceVersion() != b.GetResourceVersion()
	}
	return ra > rb
}

// freshest returns obj or what the Writer last wrote of it, the newer one. It forgets the
// written copy once obj has caught up with it and a window has passed since the write: loops
// read copies of different ages (the shared cache, or the host itself after a Conflict), and
// one that has caught up says nothing of the others. Forgotten at the first such read, the
// write would vanish for a loop whose cache is still behind, its status back to before the
// write for a moment. The caller holds w.mu.
func (w *Writer) freshest(k objKey, obj *unstructured.Unstructured) *unstructured.Unstructured {
	last, ok := w.written[k]
	if !ok {
		return obj
	}
	if newer(last.obj, obj) {
		return last.obj
	}
	if w.opts.Clock.Since(last.at) >= w.opts.Window {
		delete(w.written, k)
	}
	return obj
}

// known returns the newest copy of the object the Writer knows without its pending changes:
// obj, or what the Writer last wrote of it, with the changes of a write still on its way
// applied. While a write is in flight neither the host's answer nor the caches have it yet:
// without it, a loop would see the status go back to what it was before those changes (a
// workload's schedule gone for a moment) and act on that. The caller holds w.mu.
func (w *Writer) known(k objKey, obj *unstructured.Unstructured) *unstructured.Unstructured {
	f := w.flying[k]
	if f == nil {
		return w.freshest(k, obj)
	}
	if !newer(obj, f.base) {
		return f.view
	}
	// A newer copy than the one being written (someone else's write): the changes on it.
	view, _, _ := apply(obj, f.muts, false)
	return view
}

// apply returns a copy of base with muts applied to its status (the rest shared with base),
// and the mutations that applied. A mutation that fails on this copy (it was made for another
// one) is left out, unless it is the last one and strict: then its error is returned.
func apply(base *unstructured.Unstructured, muts []mutation, strict bool) (*unstructured.Unstructured, []mutation, error) {
	old, _ := base.Object["status"].(map[string]any)
	status := maps.Clone(old)
	if status == nil {
		status = map[string]any{}
	}
	kept := muts[:0:0]
	for i, m := range muts {
		// A mutation that fails may have changed status before it failed: it runs on a copy.
		try := maps.Clone(status)
		if err := m.apply(try); err != nil {
			if strict && i == len(muts)-1 {
				return nil, nil, err
			}
			continue
		}
		status = try
		kept = append(kept, m)
	}
	out := &unstructured.Unstructured{Object: maps.Clone(base.Object)}
	out.Object["status"] = status
	return out, kept, nil
}

// WriteStatus implements federation.StatusWriter.
func (w *Writer) WriteStatus(loop string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, mutate func(map[string]any) error) error {
	k := objKey{gvr: gvr, key: federation.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	w.mu.Lock()
	e := w.pending[k]
	fresh := false
	var base *unstructured.Unstructured
	switch {
	case e == nil:
		base = w.known(k, obj)
		now := w.opts.Clock.Now()
		e = &entry{first: now, due: now.Add(w.opts.Window)}
		fresh = true
	case newer(obj, e.base):
		base = w.known(k, obj)
	default:
		base = e.base
	}
	muts := append(e.muts[:len(e.muts):len(e.muts)], mutation{loop: loop, apply: mutate})
	view, muts, err := apply(base, muts, true)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	e.base = base
	old, _ := base.Object["status"].(map[string]any)
	if fresh && reflect.DeepEqual(normalize(old), normalize(view.Object["status"].(map[string]any))) {
		w.mu.Unlock()
		return nil // nothing to write
	}
	e.muts, e.view = muts, view
	// Each change waits a window for the next (a collector that saw the member objects late,
	// say), up to maxHolds windows after the first. A generation sync has not recorded yet
	// waits for sync's change, which follows (see waitsForSync), up to maxSyncHolds windows;
	// the count of maxHolds starts again at sync's change.
	now := w.opts.Clock.Now()
	switch {
	case waitsForSync(view):
		e.forSync = true
		e.due = e.first.Add(maxSyncHolds * w.opts.Window)
	default:
		if e.forSync {
			e.forSync, e.first = false, now
		}
		e.due = minTime(now.Add(w.opts.Window), e.first.Add(maxHolds*w.opts.Window))
	}
	w.pending[k] = e
	var notify []func(string, federation.Key)
	for s := range w.subs[gvr] {
		if s.loop != loop {
			notify = append(notify, s.fn)
		}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	for _, fn := range notify {
		fn(loop, k.key)
	}
	return nil
}

// Pending implements federation.StatusWriter.
func (w *Writer) Pending(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	out, _ := w.pending1(gvr, obj, false)
	return out
}

// PendingShared is Pending for an object the caller shares with others (a cache's stored
// object, read without a copy): it neither changes obj nor keeps it. It returns obj itself
// when nothing is pending, still shared, else a copy of the caller's own, and whether it
// returned such a copy. A reader that copies what the cache holds and then has Pending copy
// it again with the changes applied copies each object twice; with PendingShared, once
// (federation.PendingReader does so when its reader can read without copies).
func (w *Writer) PendingShared(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	return w.pending1(gvr, obj, true)
}

// pending1 is Pending and PendingShared: shared says obj is not the caller's to give away, so
// what the Writer keeps of it, or changes, is a copy.
func (w *Writer) pending1(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, shared bool) (*unstructured.Unstructured, bool) {
	k := objKey{gvr: gvr, key: federation.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.pending[k]
	if e == nil {
		if f := w.flying[k]; shared && f != nil && newer(obj, f.base) {
			// known applies the changes in flight to obj itself: to a copy of it here.
			return w.known(k, obj.DeepCopy()), true
		}
		if last := w.known(k, obj); last != obj {
			return last.DeepCopy(), true
		}
		return obj, false
	}
	if newer(obj, e.base) {
		// A newer copy (someone else's write): the mutations again, on it, which the entry
		// keeps.
		if shared {
			obj = obj.DeepCopy()
		}
		e.base = w.known(k, obj)
		e.view, e.muts, _ = apply(e.base, e.muts, false)
	}
	return e.view.DeepCopy(), true // the caller's own copy: loops change what they read
}

// Notify implements federation.StatusWriter.
func (w *Writer) Notify(ctx context.Context, loop string, gvr schema.GroupVersionResource, fn func(string, federation.Key)) {
	s := &sub{loop: loop, fn: fn}
	w.mu.Lock()
	if w.subs[gvr] == nil {
		w.subs[gvr] = map[*sub]struct{}{}
	}
	w.subs[gvr][s] = struct{}{}
	w.mu.Unlock()
	context.AfterFunc(ctx, func() {
		w.mu.Lock()
		delete(w.subs[gvr], s)
		w.mu.Unlock()
	})
}

// Drop forgets every change not written yet, and every write's answer kept for the loops to
// read: a control plane that lost its Lease writes nothing more of what its loops decided,
// and its next term reads the objects afresh. A write on its way to the host when Drop is
// called completes (as any loop's write under way does), but its changes are not tried
// again if it fails. Run may run again afterwards.
func (w *Writer) Drop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drops++
	clear(w.pending)
	clear(w.flying)
	clear(w.written)
	w.expiry = nil
}

// Run writes the pending changes as their windows end, until ctx is done; what is pending
// then is written before it returns (bounded by the host client's own timeouts).
func (w *Writer) Run(ctx context.Context) error {
	for {
		next, ok := w.flushDue(ctx, false)
		var (
			timer <-chan time.Time
			t     clock.Timer
		)
		if ok {
			t = w.opts.Clock.NewTimer(next.Sub(w.opts.Clock.Now()))
			timer = t.C()
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalFlushTimeout)
			defer cancel()
			w.flushDue(last, true)
			return nil
		case <-w.wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// flushDue writes every entry whose window has ended (all of them with all) and returns when
// the next one ends.
func (w *Writer) flushDue(ctx context.Context, all bool) (time.Time, bool) {
	now := w.opts.Clock.Now()
	w.mu.Lock()
	due := map[objKey]*entry{}
	for k, e := range w.pending {
		if all || !e.due.After(now) {
			due[k] = e
			delete(w.pending, k)
			w.flying[k] = e
		}
	}
	w.mu.Unlock()
	for k, e := range due {
		w.flush(ctx, k, e)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	next := w.forgetLocked(w.opts.Clock.Now())
	for _, e := range w.pending {
		if next.IsZero() || e.due.Before(next) {
			next = e.due
		}
	}
	return next, !next.IsZero()
}

// forgetLocked forgets the written copies keepWritten windows old at now, and returns when
// the next one will be (zero when none is kept). The caller holds w.mu.
func (w *Writer) forgetLocked(now time.Time) time.Time {
	keep := keepWritten * w.opts.Window
	for len(w.expiry) > 0 {
		x := w.expiry[0]
		if at := x.at.Add(keep); at.After(now) {
			return at
		}
		if c, ok := w.written[x.k]; ok && !c.at.After(x.at) {
			delete(w.written, x.k)
		}
		w.expiry[0] = expiring{}
		w.expiry = w.expiry[1:]
	}
	w.expiry = nil // the array goes with the last entry
	return time.Time{}
}

// flush writes one entry (it is in flying meanwhile); after a Conflict it reads the object
// again and applies the mutations again. A failure other than NotFound keeps the entry for
// another window. The entry leaves flying in the same step as its result enters written, or
// it enters pending again: what it carries never drops out of what Pending shows.
func (w *Writer) flush(ctx context.Context, k objKey, e *entry) {
	w.mu.Lock()
	view, drops := e.view, w.drops
	w.mu.Unlock()
	var err error
	for attempt := 0; ; attempt++ {
		var out *unstructured.Unstructured
		out, err = w.host.UpdateStatus(ctx, k.gvr, view)
		if err == nil {
			w.mu.Lock()
			if w.drops != drops {
				w.mu.Unlock()
				return // dropped meanwhile: nothing of it is kept
			}
			now := w.opts.Clock.Now()
			w.written[k] = writtenCopy{obj: out, at: now}
			w.expiry = append(w.expiry, expiring{k: k, at: now})
			delete(w.flying, k)
			w.mu.Unlock()
			return
		}
		if !apierrors.IsConflict(err) || attempt >= conflictRetries {
			break
		}
		fresh, gerr := w.host.Get(ctx, k.gvr, k.key.Namespace, k.key.Name)
		if gerr != nil {
			err = gerr
			break
		}
		w.mu.Lock()
		if w.drops != drops {
			w.mu.Unlock()
			return // dropped meanwhile: the changes are not tried again
		}
		e.base = fresh
		e.view, e.muts, _ = apply(fresh, e.muts, false)
		view = e.view
		w.mu.Unlock()
	}
	w.mu.Lock()
	if w.drops != drops {
		w.mu.Unlock()
		return
	}
	delete(w.flying, k)
	if apierrors.IsNotFound(err) {
		delete(w.written, k)
		w.mu.Unlock()
		return // deleted: nothing to write
	}
	e.failures++
	failures := e.failures
	if failures < maxFailures && ctx.Err() == nil {
		if later := w.pending[k]; later != nil {
			// Changes arrived meanwhile: they go after these.
			later.view, later.muts, _ = apply(later.base, append(e.muts, later.muts...), false)
			later.failures = e.failures
		} else {
			e.first = w.opts.Clock.Now()
			e.due = e.first.Add(w.opts.Window << min(e.failures, 5))
			w.pending[k] = e
		}
	}
	w.mu.Unlock()
	w.opts.Logger.Error(err, "Status write failed", "resource", k.gvr.Resource, "object", k.key.String(), "failures", failures)
}

// waitsForSync reports whether obj's generation is newer than the status.observedGeneration
// sync records once it has acted on it. The other loops' changes of such a generation (the
// scheduler's schedule, the collector's first look) come before sync's: written at once,
// a new object would cost one status write for them and one for sync's.
func waitsForSync(obj *unstructured.Unstructured) bool {
	observed, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "observedGeneration")
	var n int64
	switch v := observed.(type) {
	case int64:
		n = v
	case float64:
		n = int64(v)
	case int:
		n = int64(v)
	}
	return obj.GetGeneration() > n
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// normalize makes numbers of decoded JSON and of Go code compare alike.
func normalize(m map[string]any) any {
	if m == nil {
		return map[string]any{}
	}
	return roundTrip(m)
}

func roundTrip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = roundTrip(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = roundTrip(e)
		}
		return out
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	}
	return v
}

// String names the Writer in logs.
func (w *Writer) String() string { return fmt.Sprintf("statuswrite.Writer(window %s)", w.opts.Window) }
