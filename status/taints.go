package status

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// monitorTaint reports whether a taint key is one the ClusterMonitor owns. Every other taint
// of spec.taints is the user's and is never touched.
func monitorTaint(key string) bool {
	return key == federation.TaintClusterNotReady || key == federation.TaintClusterUnreachable
}

// taintInputs are what the monitor's taints follow, besides spec.taints as it is.
type taintInputs struct {
	// ready is the Ready condition about to be written; unreachable says it is not True
	// because the cluster cannot be reached.
	ready       metav1.Condition
	unreachable bool
	// notReadyFor is how long the cluster has been not Ready, in all within the readiness
	// window, as this monitor counted it (from the end of the last fleet disruption at most).
	notReadyFor time.Duration
	now         time.Time
	// evictionDelay is MonitorOptions.EvictionDelay.
	evictionDelay time.Duration
	// disrupted, when not "", says why the fleet is disrupted (placement.FleetDisruption): no
	// taint turns NoExecute meanwhile. disruptedSince is when its lost clusters began to go
	// (placement.Disruption.Since): a NoExecute taint added since then goes back.
	disrupted      string
	disruptedSince time.Time
}

// desiredTaints returns spec.taints with the monitor's taints brought in line with the Ready
// condition, whether that changed anything, and how long until the next change is due (0:
// none is).
//
// While Ready is not True the cluster carries federation.TaintClusterNotReady, and also
// federation.TaintClusterUnreachable when it cannot be reached: with effect NoSchedule
// (placement puts no new work there) until the cluster has been not ready for evictionDelay
// in all (notReadyFor, measured by the caller within a window on its own clock), NoExecute
// from then on (placement takes the work away unless it is tolerated). While the fleet is
// disrupted (in.disrupted) the taints stay NoSchedule however long: the control plane's own
// outage evicts nothing. A NoExecute taint already there stays NoExecute while Ready is not
// True (keepsNoExecute): a monitor that restarts, or a replica that takes over, never brings
// evicted work back only because it has not counted long enough itself. When Ready is True both are removed.
// The not-ready taint is set even when unreachable: placement implies a NoExecute not-ready
// taint on a cluster whose Ready is not True unless the monitor set its own, and the
// monitor's own is what makes the delay hold.
//
// A taint keeps its timeAdded while its effect stays. User taints keep their place and
// order; the monitor's come after them. A user's NoExecute taint without timeAdded gets one
// (stampTaint). It is pure.
func desiredTaints(taints []corev1.Taint, in taintInputs) ([]corev1.Taint, bool, time.Duration) {
	want := map[string]corev1.TaintEffect{}
	var next time.Duration
	if in.ready.Status != metav1.ConditionTrue {
		evicting := slices.ContainsFunc(taints, in.keepsNoExecute) || (in.disrupted == "" && in.notReadyFor >= in.evictionDelay)
		effect := corev1.TaintEffectNoSchedule
		switch {
		case evicting:
			effect = corev1.TaintEffectNoExecute
		case in.disrupted == "":
			next = in.evictionDelay - in.notReadyFor
		}
		want[federation.TaintClusterNotReady] = effect
		if in.unreachable {
			want[federation.TaintClusterUnreachable] = effect
		}
	}

	out := make([]corev1.Taint, 0, len(taints)+len(want))
	have := map[string]bool{}
	changed := false
	for _, t := range taints {
		if !monitorTaint(t.Key) {
			if stampTaint(&t, in.now) {
				changed = true
			}
			out = append(out, t)
			continue
		}
		effect, ok := want[t.Key]
		if !ok || have[t.Key] || t.Value != "" || t.Effect != effect {
			changed = true // removed, a duplicate, or about to be replaced
			continue
		}
		have[t.Key] = true
		out = append(out, t)
	}
	for _, key := range []string{federation.TaintClusterNotReady, federation.TaintClusterUnreachable} {
		effect, ok := want[key]
		if !ok || have[key] {
			continue
		}
		added := metav1.NewTime(in.now.Truncate(time.Second))
		out = append(out, corev1.Taint{Key: key, Effect: effect, TimeAdded: &added})
		changed = true
	}
	if len(out) == 0 {
		out = nil
	}
	return out, changed, next
}

// keepsNoExecute reports whether t is the monitor's NoExecute taint and stays so: always,
// but while the fleet is disrupted and t was added since the disruption began. Such a taint
// is the disruption's own: the monitor judged the cluster before it had lost the others (a
// cluster not Ready for long within the readiness window turns NoExecute at its first failed
// probe), and takes the taint back once it sees the fleet disrupted, as the node lifecycle
// controller does in a full disruption. Taints carry seconds, so the start does too.
func (in taintInputs) keepsNoExecute(t corev1.Taint) bool {
	if !monitorTaint(t.Key) || t.Effect != corev1.TaintEffectNoExecute {
		return false
	}
	return in.disrupted == "" || t.TimeAdded == nil || t.TimeAdded.Before(&metav1.Time{Time: in.disruptedSince.Truncate(time.Second)})
}

// stampTaint sets timeAdded to now on a NoExecute taint that has none, as Karmada's API does
// when it admits a Cluster: a toleration's tolerationSeconds counts from timeAdded, and would
// never end without one. It reports whether it set it. The stamp is written to the Cluster,
// so it survives a restart and every replica reads the same.
func stampTaint(t *corev1.Taint, now time.Time) bool {
	if t.Effect != corev1.TaintEffectNoExecute || t.TimeAdded != nil {
		return false
	}
	added := metav1.NewTime(now.Truncate(time.Second))
	t.TimeAdded = &added
	return true
}

// failoverCondition returns the Cluster's Failover condition for its Ready condition and the
// monitor's taints as they are to be, or nil when the cluster has none and needs none (it has
// always been Ready). evictIn is how long until the not-ready taint turns NoExecute (0: not
// due); disrupted, when not "", says why the fleet is disrupted. A stage keeps its message
// and transition time while it lasts, so a probe that changes no stage writes nothing. It is
// pure.
func failoverCondition(conds []metav1.Condition, ready metav1.Condition, taints []corev1.Taint, evictIn time.Duration, disrupted string, now time.Time) *metav1.Condition {
	old := meta.FindStatusCondition(conds, federation.ConditionFailover)
	var taint *corev1.Taint
	for i := range taints {
		if taints[i].Key == federation.TaintClusterNotReady {
			taint = &taints[i]
		}
	}
	since := ready.LastTransitionTime.UTC().Format(time.RFC3339)
	want := metav1.Condition{Type: federation.ConditionFailover, Status: metav1.ConditionTrue}
	switch {
	case ready.Status == metav1.ConditionTrue:
		if old == nil {
			return nil
		}
		want.Status, want.Reason = metav1.ConditionFalse, ReasonFailoverRecovered
		want.Message = fmt.Sprintf("Ready again since %s; the monitor's taints are removed, placements may choose the cluster again", since)
	case taint != nil && taint.Effect == corev1.TaintEffectNoExecute:
		at := now
		if taint.TimeAdded != nil {
			at = taint.TimeAdded.Time
		}
		want.Reason = ReasonFailoverNoExecute
		want.Message = fmt.Sprintf("not Ready since %s: taint %s:NoExecute since %s, placements that do not tolerate it lose their replicas here (tolerationSeconds counts from then)",
			since, federation.TaintClusterNotReady, at.UTC().Format(time.RFC3339))
	case disrupted != "":
		want.Reason = ReasonFailoverFleetDisrupted
		want.Message = fmt.Sprintf("not Ready since %s while the fleet is disrupted (%s), the control plane's own outage: taint %s stays NoSchedule and the replicas running here stay; NoExecute can come only EvictionDelay after the fleet is out of the disruption",
			since, disrupted, federation.TaintClusterNotReady)
	default:
		want.Reason = ReasonFailoverNoSchedule
		want.Message = fmt.Sprintf("not Ready since %s: taint %s:NoSchedule, no new placements, the replicas running here stay; NoExecute (eviction) at %s unless Ready again",
			since, federation.TaintClusterNotReady, now.Add(evictIn).Truncate(time.Second).UTC().Format(time.RFC3339))
	}
	if old != nil && old.Status == want.Status && old.Reason == want.Reason {
		keep := *old
		return &keep
	}
	want.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	return &want
}
