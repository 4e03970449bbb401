package federation

import "k8s.io/apimachinery/pkg/runtime/schema"

// A Watch is a host resource a loop's Run lists and watches through the host cache: GVR, in
// Namespace ("" = every namespace). Each loop states its watches once, in a Watches method
// that returns what its Run gives the cache, as controller-runtime's builder states a
// controller's watches once; a control plane asks each loop for them, to check the host
// serves them before the loop starts and to wait for their caches before it calls itself
// ready, rather than keep a list of its own.
//
// +kubebuilder:object:generate=false
type Watch struct {
	GVR       schema.GroupVersionResource
	Namespace string
}
