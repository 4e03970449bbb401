package sync

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Waiting for the scheduler (Options.WaitForScheduler).
//
// Without a schedule for the object's current generation, sync would evaluate spec.placement
// itself and keep the template's replica count in every cluster: on a new object, in the
// moment before the scheduler's first write, a FederatedDeployment of 6 replicas that a
// ReplicaSchedulingPreference divides 3/3/3 would run 18, then scale down. When a scheduler
// runs for the type, sync waits for it instead (KubeAdmiral's "pending controllers" play the
// same part). The scheduler writes the Scheduled condition, with the generation it observed,
// for every object it looks at: with status.schedule when it could decide (also
// Unschedulable and Unsatisfiable, whose schedule is the best effort, types without replicas,
// whose schedule lists clusters, and objects without a preference, Duplicated), without one
// when the object, its placement or its preference is invalid and no earlier schedule is
// kept. So two states make sync wait:
//
//   - the Scheduled condition has not observed the current generation: the scheduler has not
//     looked yet (ReasonWaitingForSchedule). Its write brings the object back;
//   - it has, but there is no schedule (ReasonNotScheduled): sync propagates nothing and
//     leaves the member objects as they are, never deleting one for it, until a schedule
//     comes (the preference fixed, say).

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

// waitForScheduler is a pass that waits for the scheduler (see scheduleWait): it writes
// nothing to the members and only the Propagated condition to the object, when that changes.
// An object already propagated keeps its condition while the scheduler catches up with a new
// generation (a moment; saying so would cost every spec change two more status writes).
// Waiting passes come back soon; one the scheduler refused comes back with its next write
// (the watch on the host) or after Options.ResyncPeriod.
func (s *Syncer) waitForScheduler(ctx context.Context, u *unstructured.Unstructured, fed *federation.FederatedObject, reason, message string) (federation.Result, string, error) {
	res := federation.Result{RequeueAfter: waitForScheduleDelay}
	if reason == ReasonNotScheduled {
		res.RequeueAfter = s.opts.ResyncPeriod
	}
	if reason == ReasonWaitingForSchedule && propagatedBefore(fed) {
		return res, fedmetrics.OutcomeUnchanged, nil
	}
	cond := condition(federation.ConditionPropagated, metav1.ConditionFalse, reason, message, fed.Generation)
	wrote, err := s.updateStatus(ctx, u, func(status map[string]any) error {
		if scheduledIn(status, fed.Generation) {
			// Read again after a Conflict: the scheduler wrote meanwhile, and its write
			// brings the object back for a pass that propagates.
			return nil
		}
		return s.setCondition(status, cond)
	})
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if !wrote {
		return res, fedmetrics.OutcomeUnchanged, nil
	}
	if reason == ReasonNotScheduled {
		s.event(u, eventWarning, reason, "%s", fedcond.Truncate(message, maxMessage))
	}
	return res, fedmetrics.OutcomeWritten, nil
}

// propagatedBefore reports whether sync has propagated some generation of the object: its
// Propagated condition exists and does not say it waits for the scheduler.
func propagatedBefore(obj *federation.FederatedObject) bool {
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionPropagated)
	return c != nil && c.Reason != ReasonWaitingForSchedule && c.Reason != ReasonNotScheduled
}

// scheduledIn reports whether status (unstructured) has a schedule and a Scheduled condition
// that observed generation.
func scheduledIn(status map[string]any, generation int64) bool {
	if status["schedule"] == nil {
		return false
	}
	list, _ := status["conditions"].([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["type"] == federation.ConditionScheduled {
			return equalScalar(m["observedGeneration"], generation)
		}
	}
	return false
}
