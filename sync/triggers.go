package sync

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// WatchMembers gives an embedder that drives [Syncer.Reconcile] from its own queue (a
// controller-runtime controller, say) the member triggers [Syncer.Run] has: fn is called with
// the federated object's key whenever a member object this Syncer manages changes or goes
// away in a cluster (drift, a deletion by hand), and, for a namespaced type, whenever a member
// namespace appears that an object was waiting for. fn runs on the member cache's goroutine:
// it must only enqueue the key. It returns false, and a remove that does nothing, when the
// cluster set has no member caches ([federation.MemberCache]): drift is then found by resyncs
// only. Call remove when the embedder's queue stops. Do not use it with Run, which does the same.
//
// Run also leaves out the changes of sync's own writes; fn is called for those too, and the
// pass it causes finds the object in sync and writes nothing.
func (s *Syncer) WatchMembers(fn func(federation.Key)) (remove func(), ok bool) {
	removeMembers, ok := federation.WatchMemberChanges(s.clusters, s.typ.TargetGVR(), func(_ string, obj *unstructured.Unstructured) {
		if key, mine := s.ownerOfMember(obj); mine {
			fn(key)
		}
	})
	if !ok || !s.typ.Namespaced {
		return removeMembers, ok
	}
	removeNS, _ := federation.WatchMemberChanges(s.clusters, namespaceGVR, func(cluster string, obj *unstructured.Unstructured) {
		if obj.GetDeletionTimestamp() == nil {
			for _, key := range s.namespaceWaiters(cluster, obj.GetName()) {
				fn(key)
			}
		}
	})
	return func() { removeMembers(); removeNS() }, true
}

// ClusterChanged reports whether an update of a Cluster matters to sync, so that an embedder
// driving Reconcile from its own queue requeues every federated object on it, as Run does:
// labels, spec, deletion, readiness conditions and the rest of the status, but not the
// heartbeat time or a condition's message. Creations and deletions of Clusters always matter.
func ClusterChanged(old, new *unstructured.Unstructured) bool { return loop.ClusterChanged(old, new) }
