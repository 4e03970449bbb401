package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/fedkit/fedkit/federation"
)

// eventsGVR is core/v1 Events, what client-go's record package writes.
var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// EventSink is a client-go record.EventSink that writes core/v1 Events through any
// federation.ClusterClient: a Client, or a fake.Cluster in tests. It is what connects a
// record.EventBroadcaster to the host, so that `kubectl describe` on a federated object shows
// what the loops did to it:
//
//	b := record.NewBroadcaster()
//	b.StartRecordingToSink(kube.NewEventSink(ctx, host))
//	defer b.Shutdown()
//	rec := b.NewRecorder(scheme, corev1.EventSource{Component: "fedkit"})
//
// The broadcaster decides what to retry by the concrete type of the error a sink returns (it
// type-asserts *apierrors.StatusError rather than unwrapping), so EventSink returns the API
// server's *apierrors.StatusError itself, without the "kube: ..." context a Client adds:
// otherwise an Event that already exists, or a namespace that is terminating, would be
// retried a dozen times, ten seconds apart. Other errors (the network) are returned as they
// are, and the broadcaster retries them.
type EventSink struct {
	ctx    context.Context
	client federation.ClusterClient
}

var _ record.EventSink = (*EventSink)(nil)

// NewEventSink returns an EventSink writing through c. Every request runs under ctx, since
// client-go's EventSink methods take none: cancel it when the broadcaster shuts down, so a
// write in flight does not outlive it.
func NewEventSink(ctx context.Context, c federation.ClusterClient) *EventSink {
	return &EventSink{ctx: ctx, client: c}
}

// Create creates the Event in its namespace.
func (s *EventSink) Create(e *corev1.Event) (*corev1.Event, error) {
	u, err := eventObject(e)
	if err != nil {
		return nil, err
	}
	return eventResult(s.client.Create(s.ctx, eventsGVR, u))
}

// Update replaces the Event.
func (s *EventSink) Update(e *corev1.Event) (*corev1.Event, error) {
	u, err := eventObject(e)
	if err != nil {
		return nil, err
	}
	return eventResult(s.client.Update(s.ctx, eventsGVR, u))
}

// Patch applies data, a strategic merge patch (what the broadcaster's correlator computes to
// bump an Event's count), to the Event old names.
func (s *EventSink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	if old == nil {
		return nil, fmt.Errorf("kube: patch event: %w: nil Event", federation.ErrInvalidObject)
	}
	return eventResult(s.client.Patch(s.ctx, eventsGVR, old.Namespace, old.Name, types.StrategicMergePatchType, data))
}

func eventObject(e *corev1.Event) (*unstructured.Unstructured, error) {
	if e == nil {
		return nil, fmt.Errorf("kube: event: %w: nil Event", federation.ErrInvalidObject)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e)
	if err != nil {
		return nil, fmt.Errorf("kube: event %s/%s: %w", e.Namespace, e.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("Event")
	return u, nil
}

// eventResult converts what the client returned for the broadcaster (see EventSink).
func eventResult(u *unstructured.Unstructured, err error) (*corev1.Event, error) {
	if err != nil {
		var status *apierrors.StatusError
		if errors.As(err, &status) {
			return nil, status
		}
		return nil, err
	}
	e := &corev1.Event{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, e); err != nil {
		return nil, fmt.Errorf("kube: event %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return e, nil
}
