package plan

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// Member namespaces. A real API server refuses an object whose namespace does not exist, and
// a federated object's namespace need not exist in every member. The driver creates it,
// labelled as the federation's and annotated as created by sync (CreatedNamespaceAnnotation),
// unless a FederatedNamespace governs it: then the FederatedNamespace's own sync creates it,
// with its template and overrides, and the object waits for it (ReasonWaitingForNamespace),
// or says that it will not come where the FederatedNamespace does not place it
// (ReasonNamespaceNotPlaced). A FederatedNamespace leaving a cluster keeps the member
// namespace while objects the federation placed live in it (FederationObjectIn).

// governedReason is the propagation reason of a cluster whose namespace ns is missing and
// governed by the FederatedNamespace u: waiting, where its placement puts it in cluster (or
// would, but for the cluster's readiness); not placed otherwise, saying why.
func governedReason(u *unstructured.Unstructured, cluster, ns string, clusters []federation.Cluster, now time.Time) (string, string) {
	name := ns + "/" + ns
	notPlaced := func(why string) (string, string) {
		return ReasonNamespaceNotPlaced, fmt.Sprintf("cluster %q: namespace %q does not exist, and FederatedNamespace %s, which governs it, %s: sync does not create it", cluster, ns, name, why)
	}
	fed, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return notPlaced(fmt.Sprintf("does not decode (%v)", err))
	}
	if fed.DeletionTimestamp != nil {
		return notPlaced("is being deleted")
	}
	federation.DefaultFederatedObject(fed)
	t, err := TargetsFor(fed, federation.NamespaceType, clusters, now)
	if err != nil {
		return notPlaced(fmt.Sprintf("has an invalid placement (%v)", err))
	}
	if _, placed := t.Replicas[cluster]; !placed && !slices.Contains(t.NotReady, cluster) {
		return notPlaced("does not place it in this cluster; add the cluster to its placement")
	}
	return ReasonWaitingForNamespace, fmt.Sprintf("cluster %q: namespace %q does not exist yet; its FederatedNamespace %s creates it", cluster, ns, name)
}

// FederationObjectIn returns one of objs that keeps a FederatedNamespace's member namespace
// ns ("Kind ns/name"), "" when none does: an object in ns, not being deleted, that the
// federation of identity manages (federation.ManagedByLabel; "" = federation.ManagedByValue)
// or that a PurgeNever eviction released (federation.ReleasedAnnotation). The first was
// placed there by another federated object, whose own sync removes it; the second was
// promised to stay until a person removes it. Deleting the namespace first would delete
// either behind that promise (see ReasonNamespaceInUse). The Syncer and preview both decide
// with it ([NamespaceCheck].InUse).
func FederationObjectIn(identity, ns string, objs []*unstructured.Unstructured) string {
	identity = identityOr(identity)
	for _, obj := range objs {
		if obj != nil && obj.GetNamespace() == ns && KeepsNamespace(obj, identity) && obj.GetDeletionTimestamp() == nil {
			return describe(obj)
		}
	}
	return ""
}

// KeepsNamespace reports whether obj, in a FederatedNamespace's member namespace, keeps it
// (see FederationObjectIn): the federation of identity manages it, or a PurgeNever eviction
// released it.
func KeepsNamespace(obj *unstructured.Unstructured, identity string) bool {
	return managedBy(obj, identityOr(identity)) || obj.GetAnnotations()[federation.ReleasedAnnotation] != ""
}
