package kube_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

func event(name string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: name},
		InvolvedObject: corev1.ObjectReference{Kind: "FederatedDeployment", Namespace: "default", Name: "web"},
		Reason:         "Created", Message: "created", Type: corev1.EventTypeNormal, Count: 1,
	}
}

// The broadcaster classifies a sink's errors by their concrete type: through a Client, whose
// errors carry "kube: ..." context, the sink must still return the *StatusError itself, or an
// Event that exists already would be retried for two minutes.
func TestEventSinkReturnsStatusErrors(t *testing.T) {
	c, err := kube.New(nil, kube.Options{Dynamic: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())})
	require.NoError(t, err)
	sink := kube.NewEventSink(context.Background(), c)

	got, err := sink.Create(event("web.1"))
	require.NoError(t, err)
	require.Equal(t, "Created", got.Reason)

	_, err = sink.Create(event("web.1"))
	status, ok := err.(*apierrors.StatusError)
	require.Truef(t, ok, "Create of an existing Event returned %T (%v); want *apierrors.StatusError", err, err)
	require.True(t, apierrors.IsAlreadyExists(status))

	_, err = sink.Update(event("web.2"))
	_, ok = err.(*apierrors.StatusError)
	require.Truef(t, ok, "Update of a missing Event returned %T; want *apierrors.StatusError", err)

	_, err = sink.Create(nil)
	require.ErrorIs(t, err, federation.ErrInvalidObject)
}

// An Eventf through client-go's broadcaster reaches the host as a core/v1 Event; the same event
// again bumps its count with a strategic merge patch, through the sink's Patch.
func TestEventSinkWithBroadcaster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host := fake.NewHost("host")
	b := record.NewBroadcaster(record.WithContext(ctx))
	defer b.Shutdown()
	b.StartRecordingToSink(kube.NewEventSink(ctx, host))
	rec := b.NewRecorder(runtime.NewScheme(), corev1.EventSource{Component: "fedkit"})

	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("types.federation.k8s.io/v1alpha1")
	obj.SetKind("FederatedDeployment")
	obj.SetNamespace("default")
	obj.SetName("web")
	obj.SetUID("uid-1")
	rec.Eventf(obj, corev1.EventTypeWarning, "CreateFailed", "cluster %q refused the Deployment", "eu")
	waitForEvent(t, host, 1)
	rec.Eventf(obj, corev1.EventTypeWarning, "CreateFailed", "cluster %q refused the Deployment", "eu")
	e := waitForEvent(t, host, 2)
	require.Equal(t, "CreateFailed", e.Reason)
	require.Equal(t, `cluster "eu" refused the Deployment`, e.Message)
	require.Equal(t, "fedkit", e.Source.Component)
	require.Equal(t, corev1.ObjectReference{
		APIVersion: "types.federation.k8s.io/v1alpha1", Kind: "FederatedDeployment",
		Namespace: "default", Name: "web", UID: "uid-1",
	}, e.InvolvedObject)
}

// waitForEvent polls the host until its one Event has count n.
func waitForEvent(t *testing.T, host *fake.Cluster, n int32) corev1.Event {
	t.Helper()
	var e corev1.Event
	require.Eventually(t, func() bool {
		objs := host.Objects(eventsGVR)
		if len(objs) != 1 {
			return false
		}
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &e))
		return e.Count == n
	}, 30*time.Second, time.Millisecond, "an Event with count %d", n)
	return e
}
