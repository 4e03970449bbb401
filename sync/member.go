package sync

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

// decideMember applies the per-cluster rules of Plan to one read, ready cluster. fields is the
// member type's schema (nil when unknown).
func decideMember(ch Change, ms MemberState, r rendered, fields *fieldSchema, identity string, adopt, deleting, orphan bool) Change {
	live := ms.Object
	if (!ch.Placed || deleting) && createdBySync(live) {
		return ch // another Syncer's namespace for its objects: not a FederatedNamespace's to remove
	}
	if live != nil && !managedBy(live, identity) {
		if !ch.Placed || deleting {
			return ch // never ours: leave it alone, report nothing
		}
		if other := managerOf(live); other != "" {
			ch.Reason = ReasonManagedByOther
			ch.Message = fmt.Sprintf("cluster %q: %s is managed by another federation (%s=%s); it is left alone", ch.Cluster, describe(live), federation.ManagedByLabel, other)
			return ch
		}
		if !adopt {
			ch.Reason = ReasonAlreadyExists
			ch.Message = fmt.Sprintf("cluster %q: %s exists and was not created by the federation; set the annotation %s: \"true\" on the federated object to adopt it", ch.Cluster, describe(live), federation.AdoptAnnotation)
			return ch
		}
	}
	if deleting || !ch.Placed {
		if live == nil {
			return ch
		}
		if live.GetDeletionTimestamp() != nil {
			ch.Reason = ReasonWaitingForRemoval
			ch.Message = fmt.Sprintf("cluster %q: %s is being deleted", ch.Cluster, describe(live))
			return ch
		}
		ch.Action = ActionDelete
		switch {
		case orphan:
			ch.Action = ActionOrphan
		case systemNamespace(live):
			ch.Action, ch.Reason = ActionOrphan, ReasonSystemNamespace
			ch.Message = fmt.Sprintf("cluster %q: %s is a system namespace: it is never deleted, only left without the federation's labels", ch.Cluster, describe(live))
		case ms.Host:
			ch.Action, ch.Reason = ActionOrphan, ReasonHostNamespace
			ch.Message = fmt.Sprintf("cluster %q: %s is the host's own namespace (the host is also a member): it is never deleted, only left without the federation's labels", ch.Cluster, describe(live))
		case ms.InUse != "":
			ch.Action, ch.Reason = ActionNone, ReasonNamespaceInUse
			ch.Message = fmt.Sprintf("cluster %q: %s still holds %s, which the federation placed there: the namespace is deleted once that has left", ch.Cluster, describe(live), ms.InUse)
		}
		return ch
	}
	if r.err != nil {
		ch.Reason = ReasonRenderFailed
		ch.Message = fedcond.Truncate(r.err.Error(), maxMessage)
		return ch
	}
	if r.unchanged {
		return ch // as sync left it, for the same input
	}
	if r.obj == nil {
		return ch // not rendered: not read
	}
	ch.Desired = r.obj
	switch {
	case live == nil:
		ch.Action = ActionCreate
	case live.GetDeletionTimestamp() != nil:
		ch.Reason = ReasonWaitingForRemoval
		ch.Message = fmt.Sprintf("cluster %q: %s is being deleted; it is created again once it is gone", ch.Cluster, describe(live))
	case !managedBy(live, identity):
		ch.Action = ActionUpdate // adoption
		ch.Desired = withoutKubeFedLabel(r.obj)
	case hashOf(live) != hashOf(r.obj):
		ch.Action = ActionUpdate
	case ms.memo.rv != "" && ms.memo.rv == live.GetResourceVersion():
		// Nobody changed the object since sync wrote or checked it.
	default:
		ch.Drift = slices.DeleteFunc(ownedDiff(r.obj.Object, live.Object, fields), func(p string) bool { return slices.Contains(ms.memo.dropped, p) })
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

// readFailure turns a failed member read into a propagation reason and message.
func readFailure(cluster string, err error) (string, string) {
	switch {
	case errors.As(err, new(namespaceCheckError)):
		return ReasonNamespaceCheckFailed, fedcond.Truncate(fmt.Sprintf("cluster %q: %v", cluster, err), maxMessage)
	case errors.Is(err, federation.ErrClusterNotFound):
		return ReasonClusterNotFound, fmt.Sprintf("cluster %q: %v", cluster, err)
	case errors.Is(err, federation.ErrClusterNotReady):
		return ReasonClusterNotReady, fmt.Sprintf("cluster %q: %v", cluster, err)
	case typeNotServed(err):
		return ReasonTypeNotServed, fmt.Sprintf("cluster %q does not serve the type: %v", cluster, err)
	}
	return ReasonClusterUnreachable, fedcond.Truncate(fmt.Sprintf("cluster %q: %v", cluster, err), maxMessage)
}

// managedBy reports whether obj carries the managed-by label with value identity.
func managedBy(obj *unstructured.Unstructured, identity string) bool {
	return obj != nil && managerOf(obj) == identity
}

// managerOf returns the managed-by label's value ("" when absent).
func managerOf(obj *unstructured.Unstructured) string {
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
