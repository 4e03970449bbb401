package controlplane

import (
	"context"
	"fmt"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// DefaultEventWindow is how long the control plane gathers Normal events of one reason in one
// namespace before it writes them (see Options.EventWindow).
const DefaultEventWindow = 10 * time.Second

// maxEventMessage bounds a digest's message, as kube-apiserver bounds an Event's (1024).
const maxEventMessage = 1024

// forwarder is the event recorder the loops get when the embedder gives none. The loops are
// built in New, but the broadcaster behind the recorder starts goroutines, which only Run may
// start: the forwarder passes events to the recorder of the running broadcaster, and drops
// them while Run is not running (the loops log every event anyway).
//
// Warnings go to the broadcaster at once. The Normal events of a federated object's first
// rollout (generation 1, never Ready, no recent Warning: created in its clusters, scheduled,
// Ready) are not written: its conditions say the same, and a new object then costs the host three
// writes in all (see firstRollout). Other Normal events (a change, a rescheduling, Ready
// again after a problem) are gathered per namespace and reason for a window: at its end one object's
// event is written as it was recorded, several objects' as one digest Event on the first of
// them that names each object and what happened to it (its clusters), so propagating a
// thousand objects writes a few Events rather than thousands. client-go's EventCorrelator
// aggregates only the events of one object, and each new object has its own.
type forwarder struct {
	to     atomic.Pointer[record.EventRecorderLogger]
	window time.Duration // 0: no gathering
	clock  clock.PassiveClock

	mu      gosync.Mutex
	pending map[digestKey][]recorded
	warned  map[types.UID]time.Time // federated objects with a Warning, when the last was recorded
}

// warnedFor is how long a Warning on a federated object makes its Normal events count as
// more than its first rollout (Ready again after NotReady, say).
const warnedFor = time.Hour

type digestKey struct{ namespace, reason string }

// recorded is one Normal event waiting for its window's end.
type recorded struct {
	obj        runtime.Object
	kind, name string
	msg        string
}

// Eventf records an event through the running broadcaster, if any.
func (f *forwarder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	rec := f.to.Load()
	if rec == nil {
		return
	}
	m, err := meta.Accessor(object)
	if err == nil && object.GetObjectKind().GroupVersionKind().Group == federation.TypesGroup {
		f.mu.Lock()
		_, warned := f.warned[m.GetUID()]
		switch {
		case eventtype != federation.EventTypeNormal:
			if f.warned == nil {
				f.warned = map[types.UID]time.Time{}
			}
			f.warned[m.GetUID()] = f.clock.Now()
		case !warned && firstRollout(object, m):
			f.mu.Unlock()
			return // the loops logged it; the object's conditions tell it
		}
		f.mu.Unlock()
	}
	if f.window <= 0 || eventtype != federation.EventTypeNormal || err != nil {
		(*rec).Eventf(object, eventtype, reason, messageFmt, args...)
		return
	}
	r := recorded{obj: object, kind: object.GetObjectKind().GroupVersionKind().Kind, name: m.GetName(), msg: fmt.Sprintf(messageFmt, args...)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == nil {
		f.pending = map[digestKey][]recorded{}
	}
	k := digestKey{namespace: m.GetNamespace(), reason: reason}
	f.pending[k] = append(f.pending[k], r)
}

// firstRollout reports whether the federated object obj is on its first rollout: its spec
// never changed (generation 1) and it was never Ready (its Ready condition is absent, or
// False as the collector first writes it while the members start). Its Normal events narrate
// what its Scheduled, Propagated and Ready conditions record. An object that was Ready is
// past it: a cluster joining its placement or a new schedule is an event. So is one with a
// Warning in the last warnedFor (Eventf): Ready again after NotReady is a recovery.
func firstRollout(obj runtime.Object, m metav1.Object) bool {
	if m.GetGeneration() > 1 {
		return false
	}
	switch o := obj.(type) {
	case *federation.FederatedObject:
		return !meta.IsStatusConditionTrue(o.Status.Conditions, federation.ConditionReady)
	case *unstructured.Unstructured:
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == federation.ConditionReady && c["status"] == string(metav1.ConditionTrue) {
				return false
			}
		}
		return true
	}
	return false
}

// flush writes what was gathered: one object's events as they were, several objects' as one
// digest per namespace and reason.
func (f *forwarder) flush() {
	rec := f.to.Load()
	f.mu.Lock()
	pending := f.pending
	f.pending = nil
	now := f.clock.Now()
	for uid, at := range f.warned {
		if now.Sub(at) > warnedFor {
			delete(f.warned, uid)
		}
	}
	f.mu.Unlock()
	if rec == nil {
		return
	}
	keys := make([]digestKey, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b digestKey) int { return strings.Compare(a.namespace+"/"+a.reason, b.namespace+"/"+b.reason) })
	for _, k := range keys {
		items := pending[k]
		objects := map[string]bool{}
		for _, it := range items {
			objects[it.kind+"/"+it.name] = true
		}
		if len(objects) == 1 {
			for _, it := range items {
				(*rec).Eventf(it.obj, federation.EventTypeNormal, k.reason, "%s", it.msg)
			}
			continue
		}
		(*rec).Eventf(items[0].obj, federation.EventTypeNormal, k.reason, "%s", digest(items, len(objects)))
	}
}

// digest is the message of several objects' events of one reason: "3 objects: FederatedConfigMap
// a: created ConfigMap in 3 clusters: m1, m2, m3; FederatedConfigMap b: ...", bounded, with
// how many were left out.
func digest(items []recorded, objects int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d objects: ", objects)
	for i, it := range items {
		part := fmt.Sprintf("%s %s: %s", it.kind, it.name, it.msg)
		if i > 0 {
			part = "; " + part
		}
		rest := fmt.Sprintf("; and %d more", len(items)-i)
		if b.Len()+len(part)+len(rest) > maxEventMessage {
			b.WriteString(rest)
			break
		}
		b.WriteString(part)
	}
	return b.String()
}

// startEvents starts a client-go EventBroadcaster writing to the host through a
// kube.EventSink, and points the forwarder at its recorder, and writes the gathered Normal
// events at the end of every window of Options.Clock. The returned func stops it: what was
// gathered is written, the forwarder drops events again, the broadcaster shuts down and the
// sink's requests in flight are cancelled. Events still queued then are lost, as with any
// broadcaster shut down.
//
// The broadcaster is client-go's: it aggregates and rate-limits repeated events per object
// (its EventCorrelator) and stamps them with the wall clock, not Options.Clock.
func (cp *ControlPlane) startEvents(ctx context.Context) (stop func()) {
	sinkCtx, cancel := context.WithCancel(ctx)
	b := record.NewBroadcaster(record.WithContext(sinkCtx))
	b.StartRecordingToSink(kube.NewEventSink(sinkCtx, cp.host))
	rec := b.NewRecorder(cp.scheme, corev1.EventSource{Component: cp.opts.Name}).WithLogger(cp.opts.Logger)
	cp.events.to.Store(&rec)
	done, quit := make(chan struct{}), make(chan struct{})
	var ticker clock.Ticker
	if cp.events.window > 0 {
		ticker = cp.opts.Clock.NewTicker(cp.events.window)
		go func() {
			defer close(done)
			for {
				select {
				case <-quit:
					return
				case <-ticker.C():
					cp.events.flush()
				}
			}
		}()
	} else {
		close(done)
	}
	return func() {
		close(quit)
		<-done
		if ticker != nil {
			ticker.Stop()
		}
		cp.events.flush()
		cp.events.to.Store(nil)
		b.Shutdown()
		cancel()
	}
}
