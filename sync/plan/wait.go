package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/fedkit/fedkit/federation"
)

// Waiting for the scheduler.
//
// Without a schedule for the object's current generation, sync would evaluate spec.placement
// itself and keep the template's replica count in every cluster: on a new object, in the
// moment before the scheduler's first write, a FederatedDeployment of 6 replicas that a
// ReplicaSchedulingPreference divides 3/3/3 would run 18, then scale down. When a scheduler
// runs for the type (Input.WaitForScheduler), sync waits for it instead (KubeAdmiral's
// "pending controllers" play the same part). The scheduler writes the Scheduled condition,
// with the generation it observed, for every object it looks at: with status.schedule when it
// could decide (also Unschedulable and Unsatisfiable, whose schedule is the best effort, types
// without replicas, whose schedule lists clusters, and objects without a preference,
// Duplicated), without one when the object, its placement or its preference is invalid and no
// earlier schedule is kept. So two states make sync wait:
//
//   - the Scheduled condition has not observed the current generation: the scheduler has not
//     looked yet (ReasonWaitingForSchedule). Its write brings the object back;
//   - it has, but there is no schedule (ReasonNotScheduled): sync propagates nothing and
//     leaves the member objects as they are, never deleting one for it, until a schedule
//     comes (the preference fixed, say).
//
// Two more waits hold whatever Input.WaitForScheduler says: a scheduler that has scheduled
// an older generation is waited for to catch up with the new one (WaitScheduleOutdated),
// and a cluster the schedule left out as not ready that is Ready again is waited for to be
// placed again, rather than what runs there deleted (WaitClusterReadyAgain).

// Reasons of a Wait that sync never writes: the scheduler's next write brings the object back.
const (
	// WaitScheduleOutdated: a scheduler has written a schedule before, but not yet for the
	// object's current generation.
	WaitScheduleOutdated = "ScheduleOutdated"
	// WaitClusterReadyAgain: the current schedule left out, as not ready, a cluster that is
	// Ready now; until the scheduler places it again, the schedule's silence about that
	// cluster does not mean "delete what runs there".
	WaitClusterReadyAgain = "ClusterReadyAgain"
)

// Wait is why a pass waits for the scheduler and decides nothing: nothing is created,
// updated or deleted anywhere.
type Wait struct {
	// Reason is ReasonWaitingForSchedule or ReasonNotScheduled (what [Report] writes to the
	// Propagated condition), or WaitScheduleOutdated or WaitClusterReadyAgain (which it
	// writes nowhere).
	Reason string
	// Message says why, for the condition.
	Message string
}

// waitFor returns why the pass waits for the scheduler, nil when it does not.
func waitFor(in Input) *Wait {
	obj := in.Object
	if scheduleOutdated(obj) {
		return &Wait{Reason: WaitScheduleOutdated, Message: fmt.Sprintf("waiting for the scheduler to schedule generation %d", obj.Generation)}
	}
	if in.WaitForScheduler {
		if reason, message := scheduleWait(obj); reason != "" {
			return &Wait{Reason: reason, Message: message}
		}
	}
	if scheduledBeforeReady(obj, in.Clusters) {
		return &Wait{Reason: WaitClusterReadyAgain, Message: "waiting for the scheduler to place a cluster that is Ready again"}
	}
	return nil
}

// scheduleWait reports why a pass must wait for the scheduler before it decides anything:
// ReasonWaitingForSchedule or ReasonNotScheduled with the condition's message, or "" when
// the object has a schedule for its current generation.
func scheduleWait(obj *federation.FederatedObject) (reason, message string) {
	if currentSchedule(obj) != nil {
		return "", ""
	}
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionScheduled)
	if c == nil || c.ObservedGeneration != obj.Generation {
		return ReasonWaitingForSchedule, fmt.Sprintf("waiting for the scheduler to schedule generation %d; nothing is propagated until it has", obj.Generation)
	}
	return ReasonNotScheduled, fmt.Sprintf("the scheduler did not schedule generation %d (Scheduled=%s, %s: %s); nothing is propagated, and member objects are left as they are, until it does",
		obj.Generation, c.Status, c.Reason, c.Message)
}

// propagatedBefore reports whether sync has propagated some generation of the object: its
// Propagated condition exists and does not say it waits for the scheduler.
func propagatedBefore(obj *federation.FederatedObject) bool {
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionPropagated)
	return c != nil && c.Reason != ReasonWaitingForSchedule && c.Reason != ReasonNotScheduled
}
