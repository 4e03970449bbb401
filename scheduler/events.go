package scheduler

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Event reasons of the scheduler, besides the Scheduled condition's reasons (a Warning with
// the condition's reason is recorded when Scheduled turns False or changes reason while False).
const (
	// EventScheduleChanged: status.schedule was written with other clusters or replicas.
	EventScheduleChanged = "ScheduleChanged"
)

// report records what a status write of u changed, once per change and never on a pass that
// wrote nothing: a changed schedule is counted and recorded as a Normal event; a Scheduled
// condition that turned False, or changed its reason while False, as a Warning with its
// reason. schedule is nil when the write kept the schedule.
func (s *Scheduler) report(ctx context.Context, u *unstructured.Unstructured, schedule *federation.Schedule, cond metav1.Condition) {
	oldSchedule, oldCond := previous(u)
	if schedule != nil && !sameClusters(oldSchedule, schedule.Clusters) {
		s.metrics.changes.Inc()
		msg := "scheduled to " + describeSchedule(schedule)
		if oldSchedule != nil && len(oldSchedule.Clusters) > 0 {
			msg += "; was " + describeSchedule(oldSchedule)
		}
		s.event(ctx, u, federation.EventTypeNormal, EventScheduleChanged, msg)
	}
	if cond.Status == metav1.ConditionFalse && (oldCond == nil || oldCond.Status != cond.Status || oldCond.Reason != cond.Reason) {
		s.event(ctx, u, federation.EventTypeWarning, cond.Reason, cond.Message)
	}
}

// event records an event on obj through Options.Events and logs it (loop.Event).
func (s *Scheduler) event(ctx context.Context, obj runtime.Object, typ, reason, msg string) {
	loop.Event(ctx, s.opts.Events, obj, typ, reason, msg)
}

// previous returns the schedule and the Scheduled condition that u's status holds; nil for
// what is absent or does not decode.
func previous(u *unstructured.Unstructured) (*federation.Schedule, *metav1.Condition) {
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	var old struct {
		Schedule   *federation.Schedule `json:"schedule,omitempty"`
		Conditions []metav1.Condition   `json:"conditions,omitempty"`
	}
	if status != nil {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(status, &old)
	}
	return old.Schedule, meta.FindStatusCondition(old.Conditions, federation.ConditionScheduled)
}

// describeSchedule lists a schedule's clusters and replicas: "eu (3), us (6)", or "no
// cluster".
func describeSchedule(sc *federation.Schedule) string {
	if len(sc.Clusters) == 0 {
		return "no cluster"
	}
	parts := make([]string, len(sc.Clusters))
	for i, c := range sc.Clusters {
		parts[i] = fmt.Sprintf("%s (%d)", c.Name, c.Replicas)
	}
	return strings.Join(parts, ", ")
}
