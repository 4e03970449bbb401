package scheduler

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// With rebalance off, running replicas stay where they are, except that once per
// rebalancePeriod the clusters below their fair share get replicas back (Request.Refill): a
// cluster that recovers or joins is not left empty forever, and replicas do not move more
// often than the period. Minimums are floors on every pass, not only then.
//
// The loop knows when a period has passed from status.schedule.lastRebalanceTime, which it
// owns with the rest of the schedule, so the rule survives restarts and leader changes and
// Divide stays pure (it reads no clock; the loop passes Refill):
//
//   - the first schedule starts the period (nothing moves on the first pass: an object
//     adopted with running members, or written before this field existed, keeps them);
//   - a pass at or after lastRebalanceTime + rebalancePeriod is due: it divides with Refill,
//     and when that changes the schedule, the period starts again now;
//   - a due pass that changes nothing leaves the stamp, so the next change (a cluster that
//     recovers) is refilled at once; nothing is written.
//
// Reconcile asks to be requeued when the period ends. Rebalance on (every pass moves replicas
// to their share) and KubeFed's planner (which has no such notion) leave the stamp as it is.

// window is the rebalance-period state of one pass.
type window struct {
	applies bool          // rebalance off, Webster: replicas stay put between refills
	due     bool          // this pass may refill
	period  time.Duration // the preference's rebalancePeriod
	last    *metav1.Time  // status.schedule.lastRebalanceTime before this pass
}

// refillFor reads the rebalance-period state from the preference and the previous schedule.
func refillFor(rsp *federation.ReplicaSchedulingPreference, prev *federation.Schedule, now time.Time) window {
	r := window{period: federation.DefaultRebalancePeriod}
	if p := rsp.Spec.RebalancePeriod; p != nil && p.Duration > 0 {
		r.period = p.Duration
	}
	if prev != nil {
		r.last = prev.LastRebalanceTime
	}
	r.applies = !rsp.Spec.Rebalance && rsp.Spec.Algorithm != federation.AlgorithmKubeFed
	r.due = r.applies && r.last != nil && !now.Before(r.last.Add(r.period))
	return r
}

// stamp returns the new schedule's lastRebalanceTime and when Reconcile should look again.
// Without a preference (the zero window) it keeps the stamp and asks for nothing.
func (r window) stamp(prev *federation.Schedule, next []federation.ScheduledCluster, now time.Time) (*metav1.Time, time.Duration) {
	if !r.applies {
		return r.last, r.period
	}
	if r.last == nil || (r.due && !sameClusters(prev, next)) {
		t := metav1.NewTime(now.Truncate(time.Second))
		return &t, r.period
	}
	if r.due {
		return r.last, r.period
	}
	return r.last, r.last.Add(r.period).Sub(now)
}

// sameClusters reports whether the previous schedule lists the same clusters and replicas.
func sameClusters(prev *federation.Schedule, next []federation.ScheduledCluster) bool {
	if prev == nil || len(prev.Clusters) != len(next) {
		return false
	}
	for i := range next {
		if prev.Clusters[i] != next[i] {
			return false
		}
	}
	return true
}
