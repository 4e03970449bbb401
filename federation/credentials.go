package federation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Credentials says why obj holds credentials that must never be federated as ordinary data,
// or returns "" when it holds none that fedkit knows of. It is the one test the loops that
// copy host objects to members apply (package propagation for policies, package dependencies
// for what workloads reference):
//
//   - an object labelled [SecretClusterLabel]: a member cluster's credentials;
//   - a Secret of type kubernetes.io/service-account-token: a host service account's token,
//     which no member's API server would accept, and which would let anyone who reads it
//     there act on the host;
//   - any object in controlPlaneNamespace (when not empty): the control plane's own
//     namespace ([DefaultNamespace] by default), where the clusters' credentials and its
//     Leases live.
//
// The sentence names the label, type or namespace, for a condition or an event.
func Credentials(obj *unstructured.Unstructured, controlPlaneNamespace string) string {
	if c, ok := obj.GetLabels()[SecretClusterLabel]; ok {
		return fmt.Sprintf("it holds the credentials of Cluster %q (label %s)", c, SecretClusterLabel)
	}
	if t, _, _ := unstructured.NestedString(obj.Object, "type"); t == string(corev1.SecretTypeServiceAccountToken) {
		return fmt.Sprintf("it is a service account token (type %s)", corev1.SecretTypeServiceAccountToken)
	}
	if controlPlaneNamespace != "" && obj.GetNamespace() == controlPlaneNamespace {
		return fmt.Sprintf("it is in the control plane's own namespace %s", controlPlaneNamespace)
	}
	return ""
}
