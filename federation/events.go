package federation

import "k8s.io/apimachinery/pkg/runtime"

// EventRecorder records Kubernetes Events about objects on the host: federated objects, Clusters
// and DNS records. client-go's record.EventRecorder satisfies it, so an embedder passes the
// recorder of a record.EventBroadcaster writing to the host; nil records none. Every loop's
// Options has an Events field of this type.
//
// Loops record transitions a user cares about (a schedule changed, a cluster became NotReady,
// a DNS endpoint was written), not every pass: a loop that reconciles every 30 seconds must
// not fill the host with Events that say nothing new. Messages never contain credentials.
//
// The object is the one the event is about, typed or unstructured; its apiVersion and kind
// must be set (unstructured objects read from an API server have them).
//
// +kubebuilder:object:generate=false
type EventRecorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// Event types, as core/v1 names them.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)
