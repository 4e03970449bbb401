package gate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// Names of the built-in invariants, as refusals, events and conditions name them.
const (
	// InvariantOurs: only objects carrying the federation's mark (Evidence.Mark), or
	// explicitly adopted (Evidence.Adopted), are deleted, orphaned or taken over.
	InvariantOurs = "ours"
	// InvariantReservedNamespace: nothing in kube-system, kube-public, kube-node-lease or the
	// control plane's own namespace is deleted or taken over, and none of those namespaces,
	// nor default, is deleted (a FederatedNamespace may adopt one, when asked). Orphaning one there is allowed: it only takes the federation's own labels
	// off (that is how sync lets a system namespace go). The control plane's bookkeeping on
	// the host (its Leases, sync's ControllerRevisions) is the one exception.
	InvariantReservedNamespace = "reserved-namespace"
	// InvariantClaim: a PersistentVolumeClaim (or the Federated<PersistentVolumeClaim> whose
	// deletion deletes its copies) is deleted only when its owner was deleted or asks for it
	// (Evidence.OwnerDeleted, Evidence.RemovalAsked).
	InvariantClaim = "claim"
	// InvariantLastCopy: a member workload (Deployment, StatefulSet, ReplicaSet, DaemonSet)
	// that runs available replicas is deleted only when a replacement is available elsewhere
	// (Evidence.Replacement), the user deleted the workload (Evidence.OwnerDeleted), or its own
	// placement places it nowhere (Evidence.Unplaced).
	InvariantLastCopy = "last-running-copy"
	// InvariantNamespaceEmpty: a Namespace is deleted only when proven to hold nothing else
	// (Evidence.NamespaceEmpty).
	InvariantNamespaceEmpty = "namespace-empty"
	// InvariantSecretPlacement: a Secret goes only into a cluster its own placement places it
	// in (Evidence.Placed).
	InvariantSecretPlacement = "secret-placement"
)

// Builtin returns the invariants every Gate checks, in order, for a control plane whose own
// namespace is controlPlaneNamespace.
func Builtin(controlPlaneNamespace string) []Invariant {
	return []Invariant{
		{Name: InvariantReservedNamespace, Check: func(w Write) string { return reservedNamespace(w, controlPlaneNamespace) }},
		{Name: InvariantOurs, Check: ours},
		{Name: InvariantClaim, Check: claim},
		{Name: InvariantLastCopy, Check: lastCopy},
		{Name: InvariantNamespaceEmpty, Check: namespaceEmpty},
		{Name: InvariantSecretPlacement, Check: secretPlacement},
	}
}

// destructive reports whether w removes or takes over what is there: a Delete, an Orphan or
// an Adopt.
func destructive(w Write) bool {
	return w.Verb == Delete || w.Verb == Orphan || w.Verb == Adopt
}

func core(w Write, resource string) bool {
	return w.Resource.Group == "" && w.Resource.Resource == resource
}

// bookkeeping reports whether w is about the control plane's own bookkeeping on the host: its
// Leases (leader election, shards) and sync's ControllerRevisions (the federated objects'
// history), which may live in its own namespace. Nothing it federates is either.
func bookkeeping(w Write) bool {
	r := w.Resource
	return w.Cluster == "" && ((r.Group == "coordination.k8s.io" && r.Resource == "leases") ||
		(r.Group == "apps" && r.Resource == "controllerrevisions"))
}

func reservedNamespace(w Write, controlPlaneNamespace string) string {
	if w.Verb == Place || w.Verb == Orphan || bookkeeping(w) {
		return ""
	}
	if !core(w, "namespaces") {
		return federation.ReservedNamespace(w.Object.GetNamespace(), controlPlaneNamespace)
	}
	// A reserved Namespace itself may be adopted when asked (labelled as the federation's),
	// never deleted.
	switch ns := w.Object.GetName(); {
	case w.Verb != Delete:
		return ""
	case ns == "default":
		return "default is every cluster's default namespace"
	default:
		return federation.ReservedNamespace(ns, controlPlaneNamespace)
	}
}

func ours(w Write) string {
	switch {
	case !destructive(w):
		return ""
	case w.Verb == Adopt && !w.Evidence.Adopted:
		return "it is managed by no federation and was not adopted (no adopt policy or annotation, no copy released earlier)"
	case w.Verb == Adopt:
		return ""
	case w.Evidence.Mark.On(w.Object), w.Evidence.Adopted:
		return ""
	}
	return fmt.Sprintf("it does not carry the federation's mark (%s)", w.Evidence.Mark)
}

func claim(w Write) string {
	if w.Verb != Delete || !(core(w, "persistentvolumeclaims") || w.Resource.Resource == "federatedpersistentvolumeclaims") ||
		w.Evidence.OwnerDeleted || w.Evidence.RemovalAsked {
		return ""
	}
	return "a claim holds data: it leaves a cluster only when its owner is deleted or asks for it (" +
		federation.ClaimRemovalAnnotation + ": " + federation.ClaimRemovalDelete + ")"
}

func lastCopy(w Write) string {
	e := w.Evidence
	if w.Verb != Delete || w.Cluster == "" || !workload(w) || !running(w.Object) || e.OwnerDeleted || e.Unplaced || e.Replacement != "" {
		return ""
	}
	return "it is the last running copy of the workload: no replacement is available in another cluster, and the workload was not deleted"
}

// workload reports whether w is about a kind that runs pods on its own.
func workload(w Write) bool {
	if w.Resource.Group != "apps" {
		return false
	}
	switch w.Resource.Resource {
	case "deployments", "statefulsets", "replicasets", "daemonsets":
		return true
	}
	return false
}

// running reports whether obj's status says it runs available (or ready) pods.
func running(obj *unstructured.Unstructured) bool {
	for _, f := range []string{"availableReplicas", "readyReplicas", "numberAvailable", "numberReady"} {
		v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", f)
		switch n := v.(type) {
		case int64:
			if n > 0 {
				return true
			}
		case float64:
			if n > 0 {
				return true
			}
		case int:
			if n > 0 {
				return true
			}
		}
	}
	return false
}

func namespaceEmpty(w Write) string {
	if w.Verb != Delete || !core(w, "namespaces") || w.Evidence.NamespaceEmpty {
		return ""
	}
	return "a namespace is deleted only when shown to hold nothing else"
}

func secretPlacement(w Write) string {
	if w.Verb != Place || !core(w, "secrets") || w.Cluster == "" || w.Evidence.Placed {
		return ""
	}
	return "the Secret's own placement does not place it in this cluster"
}
