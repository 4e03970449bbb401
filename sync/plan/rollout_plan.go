package plan

import (
	"slices"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// PreviousRevision is the older revision some placed clusters keep during a staged rollout
// ([Decision].Previous).
type PreviousRevision struct {
	// Revision is its number, written to the members' revision annotation.
	Revision int64
	// Object is the federated object with that revision's template, overrides and
	// retainReplicas; its placement, schedule and metadata are the current object's, since
	// where an object goes and with how many replicas is never held back.
	Object *federation.FederatedObject
	// Clusters are the placed clusters rendered from it.
	Clusters []string
}

// previousObject returns obj with the template, overrides and retainReplicas of rev: what
// the clusters a rollout holds back are rendered from. The result shares obj's metadata and
// status, and rev's spec fields; treat it as read-only.
func previousObject(obj *federation.FederatedObject, rev Revision) *federation.FederatedObject {
	out := *obj
	out.Spec.Template = rev.Spec.Template
	out.Spec.Overrides = rev.Spec.Overrides
	out.Spec.RetainReplicas = rev.Spec.RetainReplicas
	return &out
}

// previousOf is the revision the clusters d holds back keep (d.Stable), with those of placed
// it assigns to it; nil when every placed cluster runs the current revision.
func previousOf(obj *federation.FederatedObject, d RolloutDecision, placed []string) *PreviousRevision {
	if d.Stable == nil {
		return nil
	}
	prev := &PreviousRevision{Revision: d.Stable.Number, Object: previousObject(obj, *d.Stable)}
	for _, c := range placed {
		if d.Assign[c] == d.Stable.Number {
			prev.Clusters = append(prev.Clusters, c)
		}
	}
	return prev
}

// holds reports whether the cluster is rendered from prev.
func holds(prev *PreviousRevision, cluster string) bool {
	return prev != nil && slices.Contains(prev.Clusters, cluster)
}

// revisionFor is the revision the cluster's object is rendered from.
func revisionFor(in Input, prev *PreviousRevision, cluster string) int64 {
	if holds(prev, cluster) {
		return prev.Revision
	}
	return in.Revision
}

// forCluster is in as the cluster's render sees it: Object and Revision are the previous
// revision's for a cluster the rollout holds back.
func forCluster(in Input, prev *PreviousRevision, cluster string) Input {
	if holds(prev, cluster) {
		in.Object, in.Revision = prev.Object, prev.Revision
	}
	return in
}

// heldBack splits the members to render into those rendered from the current revision and
// those a staged rollout holds back at prev (none without one).
func heldBack(prev *PreviousRevision, members []override.Member) (current, held []override.Member) {
	if prev == nil || len(prev.Clusters) == 0 {
		return members, nil
	}
	for _, m := range members {
		if holds(prev, m.Name) {
			held = append(held, m)
		} else {
			current = append(current, m)
		}
	}
	return current, held
}

// withRevision records in ch the revision its cluster's object is rendered from. During a
// staged rollout (prev set) a managed member that is to run the new revision and whose
// revision annotation says another one is updated even when the rest of the render is the
// same: the Collector reports the annotation as observedRevision, and a stage is judged by
// it. The clusters held back are not judged and keep theirs; without a rollout a revision
// number alone never rewrites a member.
func withRevision(in Input, prev *PreviousRevision, ch Change) Change {
	if !ch.Placed {
		return ch
	}
	ch.Revision = revisionFor(in, prev, ch.Cluster)
	if prev != nil && ch.Revision == in.Revision && ch.Action == ActionNone && ch.Reason == "" && ch.Desired != nil &&
		managedBy(ch.Live, identityOr(in.Identity)) && RevisionOf(ch.Live) != ch.Revision {
		ch.Action = ActionUpdate
	}
	return ch
}
