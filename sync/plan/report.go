package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// Sync owns status.clusters[].propagation, .message and .revision, which clusters the list
// holds, status.syncedRevision, status.observedGeneration, status.rollout and the Propagated
// and RolledBack conditions. [Report] says what they become after a pass; the driver writes
// them over the object as read, every other field (the scheduler's schedule, the collector's
// observed fields and aggregate) carried over untouched.

// recheck is how soon a pass that waits for something no watch may bring (a namespace, an
// object that keeps a namespace, a copy being removed) comes back.
const recheck = 30 * time.Second

// waitForScheduleDelay is how soon a pass waiting for the scheduler comes back when no watch
// brings it back first.
const waitForScheduleDelay = 5 * time.Second

// Outcome is what the driver did with one Change of a Decision, for [Report]: the facts, not
// their meaning (Report decides what they say in the status).
type Outcome struct {
	// Change is the change carried out: the decided one or, after a Conflict, the one
	// decided again on the member object read again.
	Change Change
	// Wrote reports that the write went through.
	Wrote bool
	// Err is why it did not: the write's error, or that of a step before it (the member's
	// client, the rate limit, holding the Cluster, the proof a delete needs, the read after
	// a Conflict).
	Err error
	// Warnings are what the member answered the write with (its Warning headers), in order.
	Warnings []string
	// Governing is the FederatedNamespace that governs the member namespace a create found
	// missing: sync does not create that namespace, and the object waits for it.
	Governing *unstructured.Unstructured
	// Remaining is the member object a delete that went through left, read again right
	// after (its finalizers hold it); RecheckErr is the error of that read.
	Remaining  *unstructured.Unstructured
	RecheckErr error
	// MayHold, for an object being deleted, names a cluster that is not ready and may hold
	// a copy (the driver could not show it holds none): the deletion waits for it.
	MayHold bool
}

// Result is what a pass comes to: sync's part of the federated object's status, the events
// to record on it, and when to come back. Plain data, as Decision is.
type Result struct {
	// Status is what the driver writes (only when it differs from the object's); nil: no
	// status write.
	Status *Status
	// Events are the events to record on the federated object, in order.
	Events []Event
	// RequeueAfter is how soon the pass wants to come back when that is sooner than the
	// driver's periodic resync; 0: at the resync.
	RequeueAfter time.Duration
	// Retry joins the errors a retry may fix (federation.ClusterErrors: an unreachable
	// member, a server error): the driver returns it after the status write, so the object
	// is retried with backoff; nil when there is none.
	Retry error
	// Placed is how many clusters the object is placed in; InSync reports whether each of
	// them runs the revision (written or found in line, with no propagation reason).
	Placed int
	InSync bool
	// Release, for an object being deleted, says that its finalizer goes: no member object
	// is left, or Input.DeletionTimeout has passed since the deletion started, and then
	// LeftBehind names the clusters ("name (reason)") where member objects may remain.
	Release    bool
	LeftBehind []string
	// DeletionStarted, for an object being deleted that waits for its member objects, is
	// when the wait started, for the driver to record in federation.DeletionStartedAnnotation
	// (so that a restart does not start it again); zero when it is recorded already.
	DeletionStarted time.Time
}

// Status is sync's part of a federated object's status, as a pass leaves it. A field a pass
// does not write is left as it is.
type Status struct {
	// ObservedGeneration is status.observedGeneration; 0 leaves it.
	ObservedGeneration int64
	// SyncedRevision is status.syncedRevision; 0 leaves it.
	SyncedRevision int64
	// SetClusters says that Clusters replaces sync's fields of status.clusters[]: each entry
	// it lists gets them (the other loops' fields kept), the entries it does not list go.
	SetClusters bool
	Clusters    []ClusterStatus
	// SetRollout says that Rollout is status.rollout (nil removes it).
	SetRollout bool
	Rollout    *federation.RolloutStatus
	// Conditions are the conditions the pass sets (Propagated, RolledBack), without their
	// lastTransitionTime, which the driver keeps when the status did not change.
	Conditions []metav1.Condition
}

// ClusterStatus is sync's part of one status.clusters[] entry.
type ClusterStatus struct {
	// Name is the cluster's name.
	Name string
	// Propagation is the propagation reason ("" when in sync).
	Propagation string
	// Message says why, or for a cluster in sync what its member warned about the last
	// write there.
	Message string
	// Revision is the revision the cluster's object runs; 0 for none.
	Revision int64
}

// Event is an event to record on the federated object.
type Event struct {
	// Type is federation.EventTypeNormal or federation.EventTypeWarning.
	Type string
	// Reason and Message are the event's.
	Reason, Message string
	// OnChange records the event only when the status write changed the status: a pass
	// that decides what the last one did (a rollout step, a wait) says nothing again.
	OnChange bool
}

// Report turns what the driver did with a Decision (the outcome of each of its changes) into
// the status, the events and the requeue. It is pure, as Decide is: the driver writes the
// status, records the events, and comes back when it says. in and d are the pass's last
// Decide call's input and Decision, one that asks for nothing more.
//
// A pass that waits for the scheduler writes the Propagated condition (ReasonWaitingForSchedule
// for an object not propagated yet, ReasonNotScheduled), a pass that rolls back records the
// RolledBack condition and status.rollout; an object being deleted lists the clusters that
// still hold its member objects, until they are gone or Input.DeletionTimeout ends the wait.
// Otherwise status.clusters lists every placed cluster and every one with a reason, and
// status.syncedRevision becomes the revision once every placed, reachable cluster runs it.
func Report(in Input, d Decision, outcomes []Outcome) Result {
	switch {
	case d.Wait != nil:
		return waitReport(in, *d.Wait)
	case d.Rollback != nil:
		return rollbackReport(in, d)
	case in.Object.DeletionTimestamp != nil:
		return deletionReport(in, outcomes)
	}
	return passReport(in, d, outcomes)
}

// Stopped is the Result of a pass that stops before it decides anything, on bad input
// (ReasonInvalidObject, ReasonInvalidPlacement) or on a history write the host refused
// (ReasonHistoryWriteFailed): the Propagated condition says why, for generation, and so
// does a Warning event. The member objects are left as they are.
func Stopped(reason, message string, generation int64) Result {
	return Result{
		Status: &Status{ObservedGeneration: generation,
			Conditions: []metav1.Condition{condition(federation.ConditionPropagated, metav1.ConditionFalse, reason, message, generation)}},
		Events: []Event{{Type: federation.EventTypeWarning, Reason: reason, Message: fedcond.Truncate(message, maxMessage)}},
	}
}

// waitReport is the Report of a pass that waits for the scheduler. An object already
// propagated keeps its condition while the scheduler catches up with a new generation (a
// moment; saying so would cost every spec change two more status writes). Waiting passes
// come back soon; one the scheduler refused comes back with its next write (a watch) or at
// the resync.
func waitReport(in Input, w Wait) Result {
	obj := in.Object
	switch w.Reason {
	case ReasonNotScheduled:
		return Result{
			Status: &Status{Conditions: []metav1.Condition{condition(federation.ConditionPropagated, metav1.ConditionFalse, w.Reason, w.Message, obj.Generation)}},
			Events: []Event{{Type: federation.EventTypeWarning, Reason: w.Reason, Message: fedcond.Truncate(w.Message, maxMessage), OnChange: true}},
		}
	case ReasonWaitingForSchedule:
		if propagatedBefore(obj) {
			return Result{RequeueAfter: waitForScheduleDelay}
		}
		return Result{
			Status:       &Status{Conditions: []metav1.Condition{condition(federation.ConditionPropagated, metav1.ConditionFalse, w.Reason, w.Message, obj.Generation)}},
			RequeueAfter: waitForScheduleDelay,
		}
	}
	// The scheduler's write for this generation, or for the cluster, brings the object back.
	return Result{RequeueAfter: waitForScheduleDelay}
}

// passReport is the Report of a pass that carried out its changes.
func passReport(in Input, d Decision, outcomes []Outcome) Result {
	var rep Result
	results := make([]clusterResult, len(outcomes))
	for i := range outcomes {
		results[i], rep.Events = classify(in, &outcomes[i], rep.Events)
	}
	rep.Events = append(rep.Events, passEvents(in, results)...)
	ro := rolloutOf(in, d)
	entries := clusterEntries(in, results)
	rep.Status = &Status{
		ObservedGeneration: in.Object.Generation,
		SyncedRevision:     in.Object.Status.SyncedRevision,
		SetClusters:        true,
		Clusters:           entries,
		SetRollout:         true,
		Rollout:            ro.status(),
		Conditions:         []metav1.Condition{propagatedCondition(in, d.Targets, ro, results, entries)},
	}
	if reachableInSync(results, entries) && ro.complete() {
		rep.Status.SyncedRevision = in.Revision
	}
	if c, ok := ro.rolledBackCleared(in); ok {
		rep.Status.Conditions = append(rep.Status.Conditions, c)
	}
	rep.Events = append(rep.Events, ro.events()...)
	rep.Placed, rep.InSync = everywhere(results)
	rep.Retry = retryable(results)
	rep.RequeueAfter = passRequeue(ro, results)
	return rep
}

// passRequeue is when a pass comes back: a staged rollout's next time, and soon while it
// waits for what no watch may bring back.
func passRequeue(ro *rolloutPass, results []clusterResult) time.Duration {
	after := ro.requeue()
	soon := func(d time.Duration) {
		if after <= 0 || d < after {
			after = d
		}
	}
	for _, r := range results {
		switch {
		case r.Reason == ReasonWaitingForNamespace || r.Reason == ReasonNamespaceNotPlaced:
			// A member cache of Namespaces brings the object back when its namespace
			// appears; this bounds the wait where no cache does.
			soon(recheck)
		case r.Reason == ReasonRefused:
			// A refusal waits for what the gate asked for (a replacement available, the
			// object deleted): look again after a while, never in a hot loop.
			soon(gate.RecheckAfter)
		case r.Reason == ReasonNamespaceInUse:
			// Nothing need watch the objects that keep the namespace: look again soon.
			soon(recheck)
		case !r.Placed && r.Reason == ReasonWaitingForRemoval:
			// Member caches bring the object back when the copy goes; this bounds the wait
			// where no cache does.
			soon(recheck)
		}
	}
	return after
}

// propagatedCondition is the Propagated condition of a pass: True when every placed cluster
// runs the revision, False naming those that do not; the members that warned, a staged
// rollout's held-back clusters and an unsatisfiable placement are noted.
func propagatedCondition(in Input, t Targets, ro *rolloutPass, results []clusterResult, entries []ClusterStatus) metav1.Condition {
	rev := in.Revision
	var waiting, warned []string
	placed := 0
	for _, r := range results {
		if !r.Placed {
			continue
		}
		placed++
		switch e := entryOf(entries, r.Cluster); {
		case e.Propagation != "":
			waiting = append(waiting, fmt.Sprintf("%s: %s", r.Cluster, e.Propagation))
		case e.Message != "":
			warned = append(warned, r.Cluster)
		}
	}
	cond := condition(federation.ConditionPropagated, metav1.ConditionTrue, ReasonPropagated,
		fmt.Sprintf("revision %d runs in %d cluster(s)", rev, placed), in.Object.Generation)
	if len(waiting) > 0 {
		slices.Sort(waiting)
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNotPropagated
		cond.Message = fedcond.Truncate(fmt.Sprintf("revision %d runs in %d of %d cluster(s); waiting: %s",
			rev, placed-len(waiting), placed, summarize(waiting)), maxMessage)
	}
	if len(warned) > 0 {
		slices.Sort(warned)
		cond.Message = fedcond.Truncate(fmt.Sprintf("%s; the members of %s warned (status.clusters[].message)", cond.Message, summarize(warned)), maxMessage)
	}
	if note := ro.note(); note != "" {
		cond.Message = fedcond.Truncate(cond.Message+note, maxMessage)
	}
	if t.Unsatisfiable != "" {
		cond.Message = fedcond.Truncate(cond.Message+"; "+t.Unsatisfiable, maxMessage)
	}
	if placed == 0 {
		cond.Message = "placed in no cluster"
	}
	return refusedCondition(cond, results)
}

// refusedCondition is cond saying what the gate refused, in placed clusters or not:
// Propagated=False, reason RefusedByGate, naming the object, each cluster and the invariant.
func refusedCondition(cond metav1.Condition, results []clusterResult) metav1.Condition {
	var refused []string
	for _, r := range results {
		if r.Reason == ReasonRefused && r.err != nil {
			refused = append(refused, r.err.Error())
		}
	}
	if len(refused) == 0 {
		return cond
	}
	slices.Sort(refused)
	cond.Status, cond.Reason = metav1.ConditionFalse, ReasonRefused
	cond.Message = fedcond.Truncate(cond.Message+"; the gate refused: "+strings.Join(refused, "; "), maxMessage)
	return cond
}

// clusterEntries computes sync's status.clusters[] entries, by name: every cluster where the
// object is placed, where it still is (waiting for removal, or a cluster that is not ready),
// or where something went wrong.
func clusterEntries(in Input, results []clusterResult) []ClusterStatus {
	fed := in.Object
	identity := identityOr(in.Identity)
	out := make([]ClusterStatus, 0, len(results))
	for _, r := range results {
		old := previousEntry(fed, r.Cluster)
		switch {
		case r.Reason != "":
			e := ClusterStatus{Name: r.Cluster, Propagation: r.Reason, Message: r.Message, Revision: old.Revision}
			if r.Live != nil && managedBy(r.Live, identity) {
				e.Revision = RevisionOf(r.Live)
			}
			out = append(out, e)
		case r.Placed:
			// Placed clusters are always read (or known unchanged): no reason is in sync.
			out = append(out, ClusterStatus{Name: r.Cluster, Revision: cmp.Or(r.Revision, in.Revision), Message: warnedMessage(r, old)})
		}
	}
	slices.SortFunc(out, func(a, b ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// previousEntry is status.clusters' entry of cluster, the zero MemberStatus when there is
// none.
func previousEntry(fed *federation.FederatedObject, cluster string) federation.MemberStatus {
	for i := range fed.Status.Clusters {
		if fed.Status.Clusters[i].Name == cluster {
			return fed.Status.Clusters[i]
		}
	}
	return federation.MemberStatus{}
}

// entryOf is the entry of cluster in entries (sorted by name, as clusterEntries returns
// them), the zero ClusterStatus when there is none.
func entryOf(entries []ClusterStatus, cluster string) ClusterStatus {
	if i, ok := slices.BinarySearchFunc(entries, cluster, func(e ClusterStatus, name string) int { return strings.Compare(e.Name, name) }); ok {
		return entries[i]
	}
	return ClusterStatus{}
}

// warnedText says what the member warned about r's write.
func warnedText(r clusterResult) string {
	return fmt.Sprintf("cluster %q warned: %s", r.Cluster, strings.Join(r.warnings, "; "))
}

// warnedMessage is the message of a cluster in sync: the warnings of the last write there
// (see clusterResult.warnings), kept while nothing is written there, replaced by the next write's.
func warnedMessage(r clusterResult, old federation.MemberStatus) string {
	switch {
	case r.wrote && len(r.warnings) > 0:
		return fedcond.Truncate(warnedText(r), maxMessage)
	case !r.wrote && old.Propagation == "":
		return old.Message
	}
	return ""
}

// reachableInSync reports whether every placed cluster that could be reached runs the current
// revision (then it is status.syncedRevision).
func reachableInSync(results []clusterResult, entries []ClusterStatus) bool {
	for _, r := range results {
		if !r.Placed {
			continue
		}
		switch entryOf(entries, r.Cluster).Propagation {
		case "", ReasonClusterNotReady, ReasonClusterUnreachable:
		default:
			return false
		}
	}
	return true
}

// everywhere reports in how many clusters a pass placed the object, and whether each of them
// runs the pass's revision: written or found in line, with no propagation reason.
func everywhere(results []clusterResult) (placed int, ok bool) {
	ok = true
	for _, r := range results {
		if !r.Placed {
			continue
		}
		placed++
		if r.Reason != "" {
			ok = false
		}
	}
	return placed, ok
}

// summarize lists up to five items and counts the rest.
func summarize(items []string) string {
	const n = 5
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
