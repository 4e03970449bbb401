package plan

import (
	"github.com/fedkit/fedkit/federation"
)

// StableRevisionOf names the revision that the placed clusters outside the started stages
// keep while revision rolls out: the stable revision of rule 1 of [DecideRollout], as the
// object's status records it (status.rollout, or before its first staged rollout
// status.syncedRevision). name is its ControllerRevision's name when status.rollout has
// one, else ""; number is its number. ok is false when there is none, and every placed
// cluster then runs revision at once: revision is the object's first (nothing was synced
// before it), or its rollout has completed.
//
// DecideRollout then looks the stable revision up in the history, and stages nothing when
// it is gone or renders as revision does. A caller without the history, such as a preview,
// learns from StableRevisionOf alone whether revision can be staged at all.
func StableRevisionOf(obj *federation.FederatedObject, revision int64) (name string, number int64, ok bool) {
	switch p := obj.Status.Rollout; {
	case p != nil && p.Revision == revision && p.Phase == federation.RolloutComplete:
		return "", 0, false
	case p != nil && (p.Revision == revision || p.Phase != federation.RolloutComplete):
		name, number = p.StableRevisionName, p.StableRevision
	case p != nil: // the previous revision's rollout completed: it is the stable one
		name, number = p.StableRevisionName, p.Revision
	default:
		number = obj.Status.SyncedRevision
	}
	if name == "" && (number == 0 || number == revision) {
		return "", 0, false
	}
	return name, number, true
}

// NeedsHistory reports whether a staged rollout of obj at revision decides from the revision
// history (Input.History): not without spec.rollout, not when status.rollout says that
// revision's rollout completed, nor for a first rollout (no status.rollout, and nothing or
// the same revision synced before). A driver reads the history only then.
func NeedsHistory(obj *federation.FederatedObject, revision int64) bool {
	if obj.Spec.Rollout == nil {
		return false
	}
	st, synced := obj.Status.Rollout, obj.Status.SyncedRevision
	settled := st != nil && st.Revision == revision && st.Phase == federation.RolloutComplete
	first := st == nil && (synced == 0 || synced == revision)
	return !settled && !first
}
