package controlplane

import (
	"context"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/fedkit/fedkit/federation/kube"
)

// forwarder is the event recorder the loops get when the embedder gives none. The loops are
// built in New, but the broadcaster behind the recorder starts goroutines, which only Run may
// start: the forwarder passes events to the recorder of the running broadcaster, and drops
// them while Run is not running (the loops log every event anyway).
type forwarder struct {
	to atomic.Pointer[record.EventRecorderLogger]
}

// Eventf records an event through the running broadcaster, if any.
func (f *forwarder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	if rec := f.to.Load(); rec != nil {
		(*rec).Eventf(object, eventtype, reason, messageFmt, args...)
	}
}

// startEvents starts a client-go EventBroadcaster writing to the host through a
// kube.EventSink, and points the forwarder at its recorder. The returned func stops it: the
// forwarder drops events again, the broadcaster shuts down and the sink's requests in flight
// are cancelled. Events still queued then are lost, as with any broadcaster shut down.
//
// The broadcaster is client-go's: it aggregates and rate-limits repeated events per object
// (its EventCorrelator) and stamps them with the wall clock, not Options.Clock.
func (cp *ControlPlane) startEvents(ctx context.Context) (stop func()) {
	sinkCtx, cancel := context.WithCancel(ctx)
	b := record.NewBroadcaster(record.WithContext(sinkCtx))
	b.StartRecordingToSink(kube.NewEventSink(sinkCtx, cp.host))
	rec := b.NewRecorder(cp.scheme, corev1.EventSource{Component: cp.opts.Name}).WithLogger(cp.opts.Logger)
	cp.events.to.Store(&rec)
	return func() {
		cp.events.to.Store(nil)
		b.Shutdown()
		cancel()
	}
}
