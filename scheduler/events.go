package scheduler

import (
	"context"
	"fmt"
	"slices"
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
	// EventEvictionStarted: a cluster keeps the replicas it loses until their replacements
	// are available (status.schedule.evictions).
	EventEvictionStarted = "EvictionStarted"
	// EventEvictionEnded: an eviction ended (replacements available, or its deadline).
	EventEvictionEnded = "EvictionEnded"
	// EventApplicationFailover: application failover moved the replicas away from a cluster
	// where the workload was unhealthy; status.schedule.avoided lists it until its back-off
	// ends (a Warning).
	EventApplicationFailover = "ApplicationFailover"
)

// report records what a status write of u changed, once per change and never on a pass that
// wrote nothing: a changed schedule is counted and recorded as a Normal event; a Scheduled
// condition that turned False, or changed its reason while False, as a Warning with its
// reason; a cluster newly in status.schedule.avoided as a Warning (application failover).
// schedule is nil when the write kept the schedule.
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
	if schedule != nil {
		s.reportEvictions(ctx, u, oldSchedule, schedule)
		for _, a := range schedule.Avoided {
			if oldSchedule != nil && slices.ContainsFunc(oldSchedule.Avoided, func(o federation.AvoidedCluster) bool { return o.Cluster == a.Cluster }) {
				continue
			}
			s.event(ctx, u, federation.EventTypeWarning, EventApplicationFailover,
				fmt.Sprintf("the workload was unhealthy in %s for longer than its application failover tolerates: its replicas leave, and %s is avoided until %s", a.Cluster, a.Cluster, stamp(a.Until.Time)))
		}
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

// reportEvictions records an event for each eviction that began or ended with this write.
func (s *Scheduler) reportEvictions(ctx context.Context, u *unstructured.Unstructured, old, next *federation.Schedule) {
	running := func(sc *federation.Schedule) map[string]federation.Eviction {
		out := map[string]federation.Eviction{}
		if sc != nil {
			for _, e := range sc.Evictions {
				if e.State().Keeps() {
					out[e.Cluster] = e
				}
			}
		}
		return out
	}
	was, is := running(old), running(next)
	for _, e := range next.Evictions {
		if _, ok := was[e.Cluster]; !ok && e.State().Keeps() {
			s.event(ctx, u, federation.EventTypeNormal, EventEvictionStarted, fmt.Sprintf("cluster %q (%s) %s", e.Cluster, e.Reason, e.Message))
		}
	}
	if old == nil {
		return
	}
	now := s.opts.Clock.Now()
	for _, e := range old.Evictions {
		if _, ok := is[e.Cluster]; ok || e.State() == federation.EvictionReleased {
			continue
		}
		why := "its replacements are available"
		if e.State() == federation.EvictionWaiting && !now.Before(e.Deadline.Time) {
			why = "its grace period ended at " + e.Deadline.UTC().Format("2006-01-02T15:04:05Z") + ", replacements available or not"
		}
		s.event(ctx, u, federation.EventTypeNormal, EventEvictionEnded, fmt.Sprintf("cluster %q (%s): the eviction ended: %s", e.Cluster, e.Reason, why))
	}
}
