package fake

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
)

// Recorder is a [federation.EventRecorder] that keeps the events it is given, to check in a
// test which events a loop records. A zero Recorder is ready to use and safe for concurrent
// use. Unlike client-go's record.FakeRecorder it never blocks and it keeps the object each
// event is about.
//
// It models no event correlation: client-go's broadcaster counts repeated events into one
// Event object and drops floods; a Recorder keeps every call, so a test sees exactly how
// often a loop records.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

var _ federation.EventRecorder = (*Recorder)(nil)

// Event is one recorded event.
type Event struct {
	// Kind, Namespace and Name identify the object the event is about.
	Kind, Namespace, Name string
	// Type is federation.EventTypeNormal or federation.EventTypeWarning.
	Type string
	// Reason and Message are the event's.
	Reason, Message string
}

// String returns "Warning FederatedDeployment prod/web Unschedulable: message".
func (e Event) String() string {
	return fmt.Sprintf("%s %s %s %s: %s", e.Type, e.Kind, objectRef(e.Namespace, e.Name), e.Reason, e.Message)
}

// Eventf records an event about object.
func (r *Recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	e := Event{Type: eventtype, Reason: reason, Message: fmt.Sprintf(messageFmt, args...)}
	if object != nil {
		e.Kind = object.GetObjectKind().GroupVersionKind().Kind
		if m, err := meta.Accessor(object); err == nil {
			e.Namespace, e.Name = m.GetNamespace(), m.GetName()
		}
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, in order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Reset forgets the events recorded so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}
