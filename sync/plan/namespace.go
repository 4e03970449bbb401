package plan

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// Member namespaces. A real API server refuses an object whose namespace does not exist, and
// a federated object's namespace need not exist in every member. The driver creates it,
// labelled as the federation's and annotated as created by sync (CreatedNamespaceAnnotation),
// unless a FederatedNamespace governs it: then the FederatedNamespace's own sync creates it,
// with its template and overrides, and the object waits for it (ReasonWaitingForNamespace),
// or says that it will not come where the FederatedNamespace does not place it
// (ReasonNamespaceNotPlaced). A FederatedNamespace leaving a cluster keeps the member
// namespace while objects the federation placed live in it (FederationObjectIn). A namespace
// the driver created is deleted again after the last object sync put there is deleted, when
// CreatedNamespace says it is sync's and Occupant finds nothing else living in it.

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

// CreatedNamespace reports whether the member Namespace ns is one sync created for the
// federation of identity ("" = federation.ManagedByValue) and may delete again once nothing
// else lives in it: annotated CreatedNamespaceAnnotation, labelled as that federation's, and
// not being deleted already. A driver still keeps it when a FederatedNamespace governs it
// (its own sync decides) or it is the host's own (the host is also a member).
func CreatedNamespace(ns *unstructured.Unstructured, identity string) bool {
	return ns.GetAnnotations()[CreatedNamespaceAnnotation] == "true" &&
		ns.GetLabels()[federation.ManagedByLabel] == identityOr(identity) && ns.GetDeletionTimestamp() == nil
}

// NamespaceObject is one object a driver found in a member namespace, with its resource.
type NamespaceObject struct {
	Resource schema.GroupVersionResource
	Object   *unstructured.Unstructured
}

// Occupant returns an object of objs, everything member namespace ns holds, that lives there
// and is not the federation's to remove ("resource ns/name"), "" when there is none: a
// namespace sync created is deleted only then. The federation's to remove are deleted (the
// member object the driver just deleted), the objects the federation of identity manages
// that are being deleted, and what those own, through ownerReferences (a Deployment's
// ReplicaSets and their Pods, which the garbage collector deletes with it); besides them,
// what every namespace holds (everyNamespace). Everything else keeps the namespace: another
// team's objects of any kind, and the federation's objects of other federated types still
// placed there. objs must be everything: a driver that cannot list it all keeps the
// namespace.
func Occupant(identity, ns string, deleted *unstructured.Unstructured, objs []NamespaceObject) string {
	identity = identityOr(identity)
	var others []NamespaceObject
	removing := map[types.UID]bool{}
	if deleted != nil && deleted.GetUID() != "" {
		removing[deleted.GetUID()] = true
	}
	for _, o := range objs {
		switch {
		case everyNamespace(o.Resource, o.Object):
		case managedBy(o.Object, identity) && o.Object.GetDeletionTimestamp() != nil:
			removing[o.Object.GetUID()] = true
		default:
			others = append(others, o)
		}
	}
	// What the federation removes owns: dependents whose every owner goes, transitively.
	for changed := true; changed; {
		changed = false
		others = slices.DeleteFunc(others, func(o NamespaceObject) bool {
			refs := o.Object.GetOwnerReferences()
			if len(refs) == 0 || slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return !removing[r.UID] }) {
				return false
			}
			removing[o.Object.GetUID()] = true
			changed = true
			return true
		})
	}
	if len(others) == 0 {
		return ""
	}
	o := others[0]
	return fmt.Sprintf("%s %s/%s", o.Resource.GroupResource(), ns, o.Object.GetName())
}

// everyNamespace holds what the API server and its controllers create in each namespace, and
// Events, which record what happened there rather than live there.
func everyNamespace(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) bool {
	switch {
	case gvr.Resource == "events" && (gvr.Group == "" || gvr.Group == "events.k8s.io"):
		return true
	case gvr.Group != "":
		return false
	case gvr.Resource == "configmaps" && obj.GetName() == "kube-root-ca.crt":
		return true
	case gvr.Resource == "serviceaccounts" && obj.GetName() == "default":
		return true
	case gvr.Resource == "secrets":
		t, _, _ := unstructured.NestedString(obj.Object, "type")
		return t == string(corev1.SecretTypeServiceAccountToken)
	}
	return false
}
