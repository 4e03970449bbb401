package plan

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// protectedNamespace reports whether reason is one of a namespace sync orphans rather than
// deletes (a warning event each time).
func protectedNamespace(reason string) bool {
	return reason == ReasonSystemNamespace || reason == ReasonHostNamespace
}

// isNamespaceType reports whether typ federates core Namespaces (FederatedNamespace).
func isNamespaceType(typ federation.TypeConfig) bool {
	return typ.Target.Group == "" && typ.Target.Kind == "Namespace"
}

// createdBySync reports whether obj is a core Namespace that sync created for the objects it
// propagates (CreatedNamespaceAnnotation): such a namespace is released by those objects'
// passes when nothing else lives in it, never deleted by a FederatedNamespace.
func createdBySync(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetKind() == "Namespace" && obj.GetAPIVersion() == "v1" &&
		obj.GetAnnotations()[CreatedNamespaceAnnotation] == "true"
}

// systemNamespace reports whether obj is a core Namespace that sync never deletes (see
// ReasonSystemNamespace).
func systemNamespace(obj *unstructured.Unstructured) bool {
	if obj.GetKind() != "Namespace" || obj.GetAPIVersion() != "v1" {
		return false
	}
	switch obj.GetName() {
	case "default", "kube-node-lease", "kube-public", "kube-system":
		return true
	}
	return false
}

// CreatedNamespaceAnnotation marks a member Namespace that sync created for the objects it
// propagates (and may delete again once nothing else lives in it).
const CreatedNamespaceAnnotation = "federation.k8s.io/created-by-sync"

// member is what deciding one read, ready cluster's change takes: the member object as read,
// what the driver remembers of it (memo), the cluster's render, the member type's schema (nil
// when unknown), the federation's identity, and whether the object may be adopted there, is
// being deleted, and is orphaned rather than deleted when it goes (see orphanIn).
type member struct {
	MemberState
	memo                    Verified
	render                  rendered
	schema                  *Schema
	identity                string
	adopt, deleting, orphan bool
}

// decideMember applies the per-cluster rules of Decide to one read, ready cluster.
func decideMember(ch Change, m member) Change {
	live := m.Object
	if (!ch.Placed || m.deleting) && createdBySync(live) {
		return ch // another Syncer's namespace for its objects: not a FederatedNamespace's to remove
	}
	if live != nil && !managedBy(live, m.identity) {
		if out, decided := foreign(ch, m); decided {
			return out
		}
	}
	if m.deleting || !ch.Placed {
		return removal(ch, m)
	}
	return update(ch, m)
}

// foreign decides for a member object the federation does not manage: never touched where
// the object is not placed (or is being deleted), nor where another federation manages it,
// nor without adoption (then the cluster says why). decided is false when the object may be
// adopted: it is updated as the federation's.
func foreign(ch Change, m member) (out Change, decided bool) {
	live := m.Object
	switch {
	case !ch.Placed || m.deleting:
		return ch, true // never ours: leave it alone, report nothing
	case Manager(live) != "":
		ch.Reason = ReasonManagedByOther
		ch.Message = fmt.Sprintf("cluster %q: %s is managed by another federation (%s=%s); it is left alone", ch.Cluster, describe(live), federation.ManagedByLabel, Manager(live))
		return ch, true
	case !m.adopt:
		ch.Reason = ReasonAlreadyExists
		ch.Message = fmt.Sprintf("cluster %q: %s exists and was not created by the federation; set the annotation %s: \"true\" on the federated object to adopt it", ch.Cluster, describe(live), federation.AdoptAnnotation)
		return ch, true
	}
	return ch, false
}

// removal decides for a cluster the object is not placed in (or an object being deleted):
// delete what the federation manages there, or orphan it (the object asks for it, or the
// cluster leaves under RemovalOrphan, or an eviction released it), never deleting a system
// namespace, the host's own, or one that holds what the federation placed there.
func removal(ch Change, m member) Change {
	live := m.Object
	switch {
	case live == nil:
		return ch
	case live.GetDeletionTimestamp() != nil:
		ch.Reason = ReasonWaitingForRemoval
		ch.Message = fmt.Sprintf("cluster %q: %s is being deleted", ch.Cluster, describe(live))
		return ch
	}
	ch.Action = ActionDelete
	switch ns := m.Namespace; {
	case m.orphan:
		ch.Action = ActionOrphan
	case systemNamespace(live):
		ch.Action, ch.Reason = ActionOrphan, ReasonSystemNamespace
		ch.Message = fmt.Sprintf("cluster %q: %s is a system namespace: it is never deleted, only left without the federation's labels", ch.Cluster, describe(live))
	case ns != nil && ns.Host:
		ch.Action, ch.Reason = ActionOrphan, ReasonHostNamespace
		ch.Message = fmt.Sprintf("cluster %q: %s is the host's own namespace (the host is also a member): it is never deleted, only left without the federation's labels", ch.Cluster, describe(live))
	case ns != nil && ns.InUse != "":
		ch.Action, ch.Reason = ActionNone, ReasonNamespaceInUse
		ch.Message = fmt.Sprintf("cluster %q: %s still holds %s, which the federation placed there: the namespace is deleted once that has left", ch.Cluster, describe(live), ns.InUse)
	}
	return ch
}

// update decides for a placed cluster: create what is absent, update what the desired-state
// hash says changed, what is adopted, or what drifted since the driver last wrote or checked
// it; nothing for what is in line.
func update(ch Change, m member) Change {
	r, live := m.render, m.Object
	switch {
	case r.err != nil:
		ch.Reason = ReasonRenderFailed
		ch.Message = fedcond.Truncate(r.err.Error(), maxMessage)
		return ch
	case r.unchanged:
		return ch // as the driver left it, for the same input
	case r.obj == nil:
		return ch // not rendered: not read
	}
	ch.Desired = r.obj
	switch {
	case live == nil:
		ch.Action = ActionCreate
	case live.GetDeletionTimestamp() != nil:
		ch.Reason = ReasonWaitingForRemoval
		ch.Message = fmt.Sprintf("cluster %q: %s is being deleted; it is created again once it is gone", ch.Cluster, describe(live))
	case !managedBy(live, m.identity):
		ch.Action = ActionUpdate // adoption
		ch.Desired = withoutKubeFedLabel(r.obj)
	case hashOf(live) != hashOf(r.obj):
		ch.Action = ActionUpdate
	case m.memo.ResourceVersion != "" && m.memo.ResourceVersion == live.GetResourceVersion():
		// Nobody changed the object since the driver wrote or checked it.
	default:
		ch.Drift = slices.DeleteFunc(ownedDiff(r.obj.Object, live.Object, m.schema), func(p string) bool { return slices.Contains(m.memo.Dropped, p) })
		slices.Sort(ch.Drift) // the walk's order is the maps': a decision is the same every time
		if len(ch.Drift) > 0 {
			ch.Action = ActionUpdate
		}
	}
	return ch
}

// withoutKubeFedLabel returns desired without federation.KubeFedManagedLabel, which a
// render retains from a member object KubeFed made: once sync adopts the object, KubeFed
// (whose deletion of its own federated object finds member objects by that label) can no
// longer reach it. desired is returned as it is when it has no such label; else a copy.
func withoutKubeFedLabel(desired *unstructured.Unstructured) *unstructured.Unstructured {
	if _, ok, _ := unstructured.NestedFieldNoCopy(desired.Object, "metadata", "labels", federation.KubeFedManagedLabel); !ok {
		return desired
	}
	out := desired.DeepCopy()
	unstructured.RemoveNestedField(out.Object, "metadata", "labels", federation.KubeFedManagedLabel)
	return out
}

// ErrTypeNotServed marks a member's 404 for the resource itself, as a server answers for a
// type it does not serve (its CRD is not installed there), as against one for the object: a
// driver wraps such an answer with it, and the cluster reports ReasonTypeNotServed.
var ErrTypeNotServed = errors.New("sync: the member cluster does not serve the type")

// readFailure turns a failed member read (or namespace check) into a propagation reason and
// message.
func readFailure(cluster string, ms MemberState) (string, string) {
	if ms.Err == nil && ms.Namespace != nil && ms.Namespace.Err != nil {
		return ReasonNamespaceCheckFailed, fedcond.Truncate(fmt.Sprintf("cluster %q: %v", cluster, ms.Namespace.Err), maxMessage)
	}
	return readError(cluster, ms.Err)
}

// readError turns a failed member read into a propagation reason and message.
func readError(cluster string, err error) (string, string) {
	switch {
	case errors.Is(err, federation.ErrClusterNotFound):
		return ReasonClusterNotFound, fmt.Sprintf("cluster %q: %v", cluster, err)
	case errors.Is(err, federation.ErrClusterNotReady):
		return ReasonClusterNotReady, fmt.Sprintf("cluster %q: %v", cluster, err)
	case errors.Is(err, ErrTypeNotServed):
		return ReasonTypeNotServed, fmt.Sprintf("cluster %q does not serve the type: %v", cluster, err)
	}
	return ReasonClusterUnreachable, fedcond.Truncate(fmt.Sprintf("cluster %q: %v", cluster, err), maxMessage)
}

// ManagedBy reports whether obj (nil: absent) is the member object of the federation of
// identity ("" = federation.ManagedByValue): it carries federation.ManagedByLabel with that
// value. Sync modifies and deletes no other.
func ManagedBy(obj *unstructured.Unstructured, identity string) bool {
	return managedBy(obj, identityOr(identity))
}

// managedBy reports whether obj carries the managed-by label with value identity.
func managedBy(obj *unstructured.Unstructured, identity string) bool {
	return obj != nil && Manager(obj) == identity
}

// Manager returns the value of obj's federation.ManagedByLabel, "" when absent, without
// copying its labels (a driver asks it of every member change it is notified of).
func Manager(obj *unstructured.Unstructured) string {
	// Without GetLabels, which copies the whole map: this runs for every member, every pass.
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "labels", federation.ManagedByLabel)
	s, _ := v.(string)
	return s
}

func hashOf(obj *unstructured.Unstructured) string {
	return obj.GetAnnotations()[federation.DesiredHashAnnotation]
}

func identityOr(id string) string {
	if id == "" {
		return federation.ManagedByValue
	}
	return id
}

func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", obj.GetKind(), ns, obj.GetName())
	}
	return fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
}
