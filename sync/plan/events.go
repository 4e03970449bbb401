package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// Reasons of events a pass records besides the propagation reasons.
const (
	// EventRolledBack (a Warning): a staged rollout failed and its stable revision was
	// restored (spec.rollout.autoRollback).
	EventRolledBack = "RolledBack"
	// EventRolloutFailed (a Warning): a staged rollout failed and stopped.
	EventRolloutFailed = "RolloutFailed"
	// EventRolloutComplete: the revision runs in every placed cluster.
	EventRolloutComplete = "RolloutComplete"
	// EventRolloutStageStarted: a stage of a staged rollout started.
	EventRolloutStageStarted = "RolloutStageStarted"
	// EventMembersLeftBehind (a Warning): a deletion timed out (Options.DeletionTimeout)
	// while member objects may remain; the event names the clusters.
	EventMembersLeftBehind = "MembersLeftBehind"
)

// Member writes are reported once per pass, not once per write: each event is a write to the
// host (an Event object), and on a fleet of C clusters a per-write event made sync's events
// alone C host writes per federated object, more than the rest of its host writes together.
// A pass records one Normal event per reason that names every cluster written for it, e.g.
// `CreatedInCluster: created ConfigMap in 3 clusters: aws, azure, gcp`; the reasons users
// filter on (CreatedInCluster, UpdatedInCluster, DriftCorrected, DeletedFromCluster,
// OrphanedInCluster) are kept. Failures stay one Warning per cluster: each has its own cause.
//
// KubeFed records one event per cluster write (CreateInCluster, UpdateInCluster); Karmada one
// per binding pass on the resource template (SyncWorkSucceed) and the per-cluster detail on its
// Work objects, which fedkit does not have.

// Reasons of the events of member writes that succeeded.
const (
	// EventCreatedInCluster: the pass created the member object in the clusters it names.
	EventCreatedInCluster = "CreatedInCluster"
	// EventUpdatedInCluster: the pass updated the member object in the clusters it names.
	EventUpdatedInCluster = "UpdatedInCluster"
	// EventDriftCorrected: the pass put back what someone else had changed in the member
	// object, in the clusters it names, each with the changed paths.
	EventDriftCorrected = "DriftCorrected"
	// EventDeletedFromCluster: the pass deleted the member object from the clusters it names.
	EventDeletedFromCluster = "DeletedFromCluster"
	// EventOrphanedInCluster: the pass left the member object in the clusters it names, without
	// the federation's labels.
	EventOrphanedInCluster = "OrphanedInCluster"
	// EventMemberWarning (a Warning): the member API servers of the clusters it names
	// answered the pass's writes with warnings (a field the member's type does not have,
	// which it dropped; a deprecated API), each cluster's listed.
	EventMemberWarning = "MemberWarning"
)

// writeReason is the event reason of a member write that succeeded, "" for none (an orphan in
// a system namespace is warned about on its own).
func writeReason(ch Change) string {
	switch ch.Action {
	case ActionCreate:
		return EventCreatedInCluster
	case ActionUpdate:
		if len(ch.Drift) > 0 {
			return EventDriftCorrected
		}
		return EventUpdatedInCluster
	case ActionDelete:
		return EventDeletedFromCluster
	case ActionOrphan:
		if protectedNamespace(ch.Reason) {
			return ""
		}
		return EventOrphanedInCluster
	}
	return ""
}

// passEvents are the pass's successful member writes: one Normal event per reason, naming
// the clusters in name order (a drift correction with the paths put back in each), then the
// members' warnings.
func passEvents(in Input, results []clusterResult) []Event {
	byReason := map[string][]string{}
	for _, r := range results {
		if !r.wrote {
			continue
		}
		reason := writeReason(*r.Change)
		if reason == "" {
			continue
		}
		item := r.Cluster
		if reason == EventDriftCorrected {
			item += " (" + strings.Join(r.Drift, ", ") + ")"
		}
		byReason[reason] = append(byReason[reason], item)
	}
	order := [...]struct{ reason, verb string }{
		{EventCreatedInCluster, "created"},
		{EventUpdatedInCluster, "updated"},
		{EventDriftCorrected, "corrected drift of"},
		{EventDeletedFromCluster, "deleted"},
		{EventOrphanedInCluster, "orphaned"},
	}
	var out []Event
	for _, e := range order {
		items := byReason[e.reason]
		if len(items) == 0 {
			continue
		}
		slices.Sort(items)
		noun := "clusters"
		if len(items) == 1 {
			noun = "cluster"
		}
		msg := fmt.Sprintf("%s %s in %d %s: %s", e.verb, in.Type.Target.Kind, len(items), noun, strings.Join(items, ", "))
		out = append(out, Event{Type: federation.EventTypeNormal, Reason: e.reason, Message: fedcond.Truncate(msg, maxMessage)})
	}
	if w, ok := warningEvent(results); ok {
		out = append(out, w)
	}
	return out
}

// warningEvent is one Warning event for the pass's writes that the members answered with
// warnings, naming each cluster and its warnings (in cluster order).
func warningEvent(results []clusterResult) (Event, bool) {
	var items []string
	for _, r := range results {
		if r.wrote && len(r.warnings) > 0 {
			items = append(items, warnedText(r))
		}
	}
	if len(items) == 0 {
		return Event{}, false
	}
	slices.Sort(items)
	return Event{Type: federation.EventTypeWarning, Reason: EventMemberWarning, Message: fedcond.Truncate(strings.Join(items, ". "), maxMessage)}, true
}
