package recommend

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fedkit/fedkit/federation"
)

// ReasonScalingDisabled: the fleet's total is 0 and minReplicas is not: autoscaling is off
// until someone sets a total (an HPA's rule).
const ReasonScalingDisabled = "ScalingDisabled"

// DecideInput is what [Decide] looks at: [Recommend]'s input and the memory of the passes
// before.
type DecideInput struct {
	Input
	History History
}

// Decision is what the autoscaler does with one preference: the total to write, the
// conditions and the memory to keep. It is plain data; treat it as read-only.
type Decision struct {
	// Current is the fleet's total before; Desired the one to write (Current: no change).
	Current, Desired int32

	// Recommendation is what the metrics asked for; Stabilized what behavior made of it
	// (zero when there was no recommendation).
	Recommendation Recommendation
	Stabilized     Stabilized

	// History is the memory to keep once Desired is written (or when it is Current).
	History History

	// Conditions are ScalingActive, AbleToScale and ScalingLimited, without timestamps or
	// observedGeneration.
	Conditions []metav1.Condition

	// CurrentMetrics are the metrics' current values, status.autoscale.currentMetrics.
	CurrentMetrics []autoscalingv2.MetricStatus

	// Message explains the decision in one line: "12 -> 18: cpu 91% of 60% over 14 ready
	// pods in 3 of 3 clusters". The loop's Event and condition carry it.
	Message string
}

// Changed reports whether the decision changes the total.
func (d Decision) Changed() bool { return d.Desired != d.Current }

// Total returns the fleet total Central mode writes to status.autoscale.desiredReplicas, and
// whether it writes one: when the metrics gave a recommendation or the total changed (a
// total brought within the bounds). Otherwise the total written before holds.
func (d Decision) Total() (int32, bool) {
	return d.Desired, d.Recommendation.Active || d.Changed()
}

// Decide is the autoscaler's one decision for a preference: [Recommend], then [Stabilize]
// within the fleet's bounds, with an HPA's conditions and a one-line explanation. The loop
// and package preview call it. It is a pure function.
//
// Before the metrics, an HPA's rules: a total of 0 with minReplicas above 0 disables
// autoscaling (the total holds); a total outside the bounds is brought within them. Without
// a recommendation (no quorum, no metric computable) the total holds and the history is
// kept as it was. in.Autoscale is defaulted here ([federation.DefaultAutoscale]) when it is
// not already.
func Decide(in DecideInput) Decision {
	a := *in.Autoscale.DeepCopy()
	federation.DefaultAutoscale(&a)
	in.Autoscale = a
	lo, hi := ptr.Deref(a.MinReplicas, federation.DefaultAutoscaleMinReplicas), a.MaxReplicas
	d := Decision{Current: in.Current, Desired: in.Current, History: in.History}
	switch {
	case in.Current == 0 && lo != 0:
		d.conditions(false, ReasonScalingDisabled, "the fleet's total is 0: autoscaling is off until it is set", "", "", "", "")
		d.Message = "0: autoscaling is off while the total is 0"
		return d
	case in.Current > hi || in.Current < lo:
		d.Desired = min(max(in.Current, lo), hi)
		why := fmt.Sprintf("the total is outside the fleet's bounds %d to %d", lo, hi)
		d.conditions(true, ReasonValidMetricFound, why, ReasonReadyForNewScale, why, limitReason(d.Desired, hi), why)
		d.Message = fmt.Sprintf("%d -> %d: %s", d.Current, d.Desired, why)
		return d
	}
	d.Recommendation = Recommend(in.Input)
	rec := d.Recommendation
	for _, m := range rec.Metrics {
		if m.Err == "" {
			d.CurrentMetrics = append(d.CurrentMetrics, m.Status)
		}
	}
	if !rec.Active {
		d.conditions(false, rec.Reason, rec.Message, "", "", "", "")
		d.Message = fmt.Sprintf("%d holds: %s", d.Current, rec.Message)
		return d
	}
	d.Stabilized = Stabilize(StabilizeInput{
		Behavior: *a.Behavior, Min: lo, Max: hi, Current: in.Current, Recommended: rec.Replicas,
		History: in.History, Now: in.Now,
	})
	s := d.Stabilized
	d.Desired, d.History = s.Replicas, s.History
	d.conditions(true, rec.Reason, rec.Message, s.AbleReason, s.AbleMessage, s.LimitReason, s.LimitMessage)
	d.Message = d.explain()
	return d
}

func limitReason(desired, hi int32) string {
	if desired == hi {
		return ReasonTooManyReplicas
	}
	return ReasonTooFewReplicas
}

// conditions sets the three conditions; an empty able or limit reason leaves that one out
// (it keeps what it said last).
func (d *Decision) conditions(active bool, reason, msg, able, ableMsg, limit, limitMsg string) {
	d.Conditions = []metav1.Condition{{Type: federation.ConditionScalingActive, Status: cond(active), Reason: reason, Message: msg}}
	if able != "" {
		d.Conditions = append(d.Conditions, metav1.Condition{Type: federation.ConditionAbleToScale, Status: metav1.ConditionTrue, Reason: able, Message: ableMsg})
	}
	if limit != "" {
		d.Conditions = append(d.Conditions, metav1.Condition{Type: federation.ConditionScalingLimited, Status: cond(limit != ReasonDesiredWithinRange), Reason: limit, Message: limitMsg})
	}
}

func cond(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// explain is the one-line account of a decision from a recommendation: the change, the
// deciding metric's summary, what held shares, and what held the total.
func (d *Decision) explain() string {
	rec, s := d.Recommendation, d.Stabilized
	m := rec.Metrics[rec.Metric]
	var b strings.Builder
	if d.Changed() {
		fmt.Fprintf(&b, "%d -> %d: %s", d.Current, d.Desired, m.Summary)
	} else {
		fmt.Fprintf(&b, "%d holds: %s", d.Current, m.Summary)
	}
	if len(m.Held) > 0 {
		b.WriteString("; " + strings.Join(m.Held, ", "))
	}
	if s.Stabilized != rec.Replicas {
		fmt.Fprintf(&b, "; %d recommended, %s (%s)", rec.Replicas, s.AbleReason, s.AbleMessage)
	}
	if s.Replicas != s.Stabilized {
		fmt.Fprintf(&b, "; %s: %s", s.LimitReason, s.LimitMessage)
	}
	return b.String()
}
