package federation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SystemNamespace reports whether namespace is one every cluster has for its own
// components: kube-system, kube-public or kube-node-lease. Nothing in them is federated from
// the host, whatever a policy's selectors say or a workload refers to: a policy that
// federates every Deployment would otherwise copy the host's CoreDNS over every member's.
func SystemNamespace(namespace string) bool {
	switch namespace {
	case metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease:
		return true
	}
	return false
}

// ReservedNamespace says why the loops that federate host objects (package propagation for
// policies, package dependencies for what workloads refer to) take nothing from namespace,
// or returns "" when they may: a system namespace ([SystemNamespace]), or the control
// plane's own namespace controlPlaneNamespace (when not empty; [DefaultNamespace] by
// default), where the clusters' credentials and its Leases live. The sentence names the
// namespace and the rule, for a condition or an event.
func ReservedNamespace(namespace, controlPlaneNamespace string) string {
	switch {
	case SystemNamespace(namespace):
		return fmt.Sprintf("%s is a system namespace (kube-system, kube-public, kube-node-lease): nothing in it is federated", namespace)
	case controlPlaneNamespace != "" && namespace == controlPlaneNamespace:
		return fmt.Sprintf("%s is the control plane's own namespace: nothing in it is federated", namespace)
	}
	return ""
}
