package recommend

import (
	"fmt"
	"math"
	"slices"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

// Reasons of the AbleToScale and ScalingLimited conditions, an HPA's.
const (
	// ReasonReadyForNewScale: the stabilized total is the recommendation.
	ReasonReadyForNewScale = "ReadyForNewScale"
	// ReasonScaleUpStabilized: a lower recommendation within the scale-up window holds the
	// total down.
	ReasonScaleUpStabilized = "ScaleUpStabilized"
	// ReasonScaleDownStabilized: a higher recommendation within the scale-down window holds
	// the total up.
	ReasonScaleDownStabilized = "ScaleDownStabilized"
	// ReasonDesiredWithinRange: no bound or rate held the total.
	ReasonDesiredWithinRange = "DesiredWithinRange"
	// ReasonTooManyReplicas and ReasonTooFewReplicas: the fleet's maxReplicas or minReplicas
	// held the total.
	ReasonTooManyReplicas = "TooManyReplicas"
	ReasonTooFewReplicas  = "TooFewReplicas"
	// ReasonScaleUpLimit and ReasonScaleDownLimit: a scaling policy held the rate.
	ReasonScaleUpLimit   = "ScaleUpLimit"
	ReasonScaleDownLimit = "ScaleDownLimit"
)

// History is the autoscaler's memory of one preference: its recent recommendations and the
// changes it made to the total. [Stabilize] reads it and returns the next one; the loop keeps
// it in memory. It is plain data, and never changed in place.
type History struct {
	// Since is when this memory starts (the first pass after a start or a new leader).
	// Before a whole scale-down window has passed since, the current total counts as
	// recommended over the part of the window nobody remembers: the first scale-down after a
	// restart waits one window, as if the total had been recommended all along.
	Since time.Time

	// Recommendations are the totals the metrics asked for, each with when.
	Recommendations []Recommended

	// ScaleUps and ScaleDowns are the changes made to the total, each with when.
	ScaleUps, ScaleDowns []ScaleEvent
}

// Recommended is one recommendation and when it was made.
type Recommended struct {
	Replicas int32
	At       time.Time
}

// ScaleEvent is one change of the total: by how many replicas (positive), and when.
type ScaleEvent struct {
	Change int32
	At     time.Time
}

// StabilizeInput is what [Stabilize] looks at.
type StabilizeInput struct {
	// Behavior is spec.autoscale.behavior, defaulted (both directions set).
	Behavior autoscalingv2.HorizontalPodAutoscalerBehavior
	// Min and Max are the fleet's bounds.
	Min, Max int32
	// Current is the fleet's total now; Recommended what the metrics ask for.
	Current, Recommended int32
	// History is the memory of the passes before; Now the current time.
	History History
	Now     time.Time
}

// Stabilized is the total [Stabilize] decided, why, and the memory to keep.
type Stabilized struct {
	// Replicas is the total to write.
	Replicas int32
	// Stabilized is the total after the stabilization windows, before the bounds and
	// rates.
	Stabilized int32
	// AbleReason and AbleMessage are the AbleToScale condition's (True); LimitReason and
	// LimitMessage the ScalingLimited condition's (True when Replicas is not Stabilized).
	AbleReason, AbleMessage   string
	LimitReason, LimitMessage string
	// History is the memory with this pass in it: the recommendation, and the change when
	// Replicas is not Current. Keep it once Replicas is written.
	History History
}

// Stabilize applies a HorizontalPodAutoscaler's behavior to a recommendation. It is a pure
// function; its rules are kube's (facts ported in this package's stories):
//
//  1. Stabilization: the total moves up no further than the lowest recommendation of the
//     scale-up window, and down no further than the highest of the scale-down window (with
//     Current counting for the part of that window before History.Since). So a scale-down
//     never follows a scale-up within the scale-down window: flapping metrics move the
//     total up once and hold it.
//  2. Rates: going up, the total stays within each policy's limit over its period (the
//     total at the period's start plus Value pods, or plus Value percent, rounded up), the
//     highest limit with selectPolicy Max, the lowest with Min, none with Disabled; going
//     down likewise (minus Value pods, or Value percent, rounded down). A limit never
//     reverses the direction. Then minReplicas and maxReplicas.
//  3. Memory: the recommendation is kept with Now, and the change when there is one; what
//     is older than both windows (recommendations) or a direction's longest policy period
//     (changes) is forgotten.
func Stabilize(in StabilizeInput) Stabilized {
	up, down := rulesOrDefault(in.Behavior.ScaleUp), rulesOrDefault(in.Behavior.ScaleDown)
	h := in.History
	if h.Since.IsZero() {
		h.Since = in.Now
	}
	upWindow := seconds(ptr.Deref(up.StabilizationWindowSeconds, 0))
	downWindow := seconds(ptr.Deref(down.StabilizationWindowSeconds, 0))

	upTo, downTo := in.Recommended, in.Recommended
	for _, r := range h.Recommendations {
		if r.At.After(in.Now.Add(-upWindow)) {
			upTo = min(upTo, r.Replicas)
		}
		if r.At.After(in.Now.Add(-downWindow)) {
			downTo = max(downTo, r.Replicas)
		}
	}
	if in.Now.Sub(h.Since) < downWindow {
		downTo = max(downTo, in.Current)
	}
	stable := min(max(in.Current, upTo), downTo)

	out := Stabilized{Stabilized: stable}
	switch {
	case stable == in.Recommended:
		out.AbleReason, out.AbleMessage = ReasonReadyForNewScale, "recommended size matches current size"
	case in.Recommended >= in.Current:
		out.AbleReason = ReasonScaleUpStabilized
		out.AbleMessage = fmt.Sprintf("recent recommendations were lower than %d: the lowest within %s is applied", in.Recommended, upWindow)
	default:
		out.AbleReason = ReasonScaleDownStabilized
		out.AbleMessage = fmt.Sprintf("recent recommendations were higher than %d: the highest within %s is applied", in.Recommended, downWindow)
	}
	out.Replicas, out.LimitReason, out.LimitMessage = limit(in, stable, up, down, h)

	h.Recommendations = append(forget(h.Recommendations, in.Now.Add(-max(upWindow, downWindow))), Recommended{Replicas: in.Recommended, At: in.Now})
	h.ScaleUps = forgetEvents(h.ScaleUps, in.Now.Add(-longestPeriod(up)))
	h.ScaleDowns = forgetEvents(h.ScaleDowns, in.Now.Add(-longestPeriod(down)))
	switch {
	case out.Replicas > in.Current:
		h.ScaleUps = append(h.ScaleUps, ScaleEvent{Change: out.Replicas - in.Current, At: in.Now})
	case out.Replicas < in.Current:
		h.ScaleDowns = append(h.ScaleDowns, ScaleEvent{Change: in.Current - out.Replicas, At: in.Now})
	}
	out.History = h
	return out
}

// limit applies the rate policies and the bounds to the stabilized total (step 2).
func limit(in StabilizeInput, desired int32, up, down *autoscalingv2.HPAScalingRules, h History) (int32, string, string) {
	switch {
	case desired > in.Current:
		lim := max(scaleLimit(in.Current, h, up, in.Now, +1), in.Current)
		top, reason, msg := in.Max, ReasonTooManyReplicas, "the desired replica count is more than the maximum replica count"
		if top > lim {
			top, reason, msg = lim, ReasonScaleUpLimit, "the desired replica count is increasing faster than the maximum scale rate"
		}
		if desired > top {
			return top, reason, msg
		}
	case desired < in.Current:
		lim := min(scaleLimit(in.Current, h, down, in.Now, -1), in.Current)
		bottom, reason, msg := in.Min, ReasonTooFewReplicas, "the desired replica count is less than the minimum replica count"
		if bottom < lim {
			bottom, reason, msg = lim, ReasonScaleDownLimit, "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if desired < bottom {
			return bottom, reason, msg
		}
	}
	return desired, ReasonDesiredWithinRange, "the desired count is within the acceptable range"
}

// scaleLimit is the farthest the policies of r let the total go from current in direction
// dir (+1 up, -1 down): each policy's proposal from the total at its period's start
// (current less the changes within the period), the most change with selectPolicy Max,
// the least with Min; current with Disabled.
func scaleLimit(current int32, h History, r *autoscalingv2.HPAScalingRules, now time.Time, dir int32) int32 {
	sel := ptr.Deref(r.SelectPolicy, autoscalingv2.MaxChangePolicySelect)
	switch {
	case sel == autoscalingv2.DisabledPolicySelect:
		return current
	case len(r.Policies) == 0: // no policy, no limit (defaulting always gives one)
		return dir * math.MaxInt32
	}
	pick := func(a, b int32) int32 {
		if (sel == autoscalingv2.MinChangePolicySelect) == (dir > 0) {
			return min(a, b)
		}
		return max(a, b)
	}
	var result int32 = math.MaxInt32
	if pick(0, 1) == 1 {
		result = math.MinInt32
	}
	for _, p := range r.Policies {
		cutoff := now.Add(-seconds(p.PeriodSeconds))
		start := current - changeSince(h.ScaleUps, cutoff) + changeSince(h.ScaleDowns, cutoff)
		result = pick(result, propose(start, p, dir))
	}
	return result
}

// propose is one policy's limit from the total at its period's start.
func propose(start int32, p autoscalingv2.HPAScalingPolicy, dir int32) int32 {
	if p.Type == autoscalingv2.PodsScalingPolicy {
		return AddReplicas(start, dir*p.Value)
	}
	if dir > 0 {
		return ceil32(float64(start) * (1 + float64(p.Value)/100))
	}
	return int32(float64(start) * (1 - float64(p.Value)/100))
}

// changeSince sums the changes after cutoff.
func changeSince(events []ScaleEvent, cutoff time.Time) int32 {
	var n int32
	for _, e := range events {
		if e.At.After(cutoff) {
			n += e.Change
		}
	}
	return n
}

func forget(rs []Recommended, cutoff time.Time) []Recommended {
	return slices.DeleteFunc(slices.Clone(rs), func(r Recommended) bool { return !r.At.After(cutoff) })
}

func forgetEvents(es []ScaleEvent, cutoff time.Time) []ScaleEvent {
	return slices.DeleteFunc(slices.Clone(es), func(e ScaleEvent) bool { return !e.At.After(cutoff) })
}

func longestPeriod(r *autoscalingv2.HPAScalingRules) time.Duration {
	var p int32
	for _, x := range r.Policies {
		p = max(p, x.PeriodSeconds)
	}
	return seconds(p)
}

// rulesOrDefault is r, or rules without policies (no limit) when nil.
func rulesOrDefault(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if r == nil {
		return &autoscalingv2.HPAScalingRules{}
	}
	return r
}

func seconds(s int32) time.Duration { return time.Duration(s) * time.Second }
