package recommend

import (
	"fmt"
	"math"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// tolerances are how far below and above 1 a usage ratio may be and change nothing.
type tolerances struct{ down, up float64 }

func tolerancesOf(b *autoscalingv2.HorizontalPodAutoscalerBehavior) tolerances {
	t := tolerances{down: defaultTolerance, up: defaultTolerance}
	if b == nil {
		return t
	}
	if r := b.ScaleDown; r != nil && r.Tolerance != nil {
		t.down = r.Tolerance.AsApproximateFloat64()
	}
	if r := b.ScaleUp; r != nil && r.Tolerance != nil {
		t.up = r.Tolerance.AsApproximateFloat64()
	}
	return t
}

func (t tolerances) within(ratio float64) bool {
	return 1-t.down <= ratio && ratio <= 1+t.up
}

// podKind is how a pod counts for one metric (kube's groupPods).
type podKind int

const (
	podReady podKind = iota
	podUnready
	podMissing
	podIgnored
)

// pooled is the pods of the reporting clusters for one metric: how many are ready, which
// are unready or missing, and the ready pods' values, keyed "cluster/pod".
type pooled struct {
	ready            int
	unready, missing []string
	values           map[string]int64
	pods             int
}

// valueFunc is a pod's value for the metric; ok is false when it has none (missing).
type valueFunc func(p *Pod) (v int64, ok bool)

// pool groups the pods of p's clusters for a metric whose values valueOf reads. cpu says
// whether the cpu readiness rules apply (a cpu resource metric).
func (f *fleet) pool(p part, valueOf valueFunc, cpu bool) pooled {
	out := pooled{values: map[string]int64{}}
	for _, s := range p.reporting {
		for i := range s.Pods {
			pod := &s.Pods[i]
			name := s.Cluster + "/" + pod.Name
			v, ok := valueOf(pod)
			switch f.kind(pod, ok, cpu) {
			case podIgnored:
				continue
			case podUnready:
				out.unready = append(out.unready, name)
			case podMissing:
				out.missing = append(out.missing, name)
			default:
				out.ready++
				out.values[name] = v
			}
			out.pods++
		}
	}
	return out
}

// kind is kube's groupPods for one pod: deleted and failed pods are ignored; pending ones
// are unready; pods without a value are missing; for cpu, a pod without a Ready condition
// or a start time, a pod within the cpu initialization period that is not ready or whose
// sample predates one window after it turned ready, and a pod past that period that is not
// ready and never was (its condition last moved within the readiness delay of its start)
// are unready.
func (f *fleet) kind(p *Pod, hasValue, cpu bool) podKind {
	switch {
	case p.Deleting || p.Phase == corev1.PodFailed:
		return podIgnored
	case p.Phase == corev1.PodPending:
		return podUnready
	case !hasValue:
		return podMissing
	case !cpu:
		return podReady
	case p.Ready == "" || p.Started.IsZero():
		return podUnready
	case p.Started.Add(f.in.CPUInitializationPeriod).After(f.in.Now):
		if p.Ready == corev1.ConditionFalse || p.Usage.Timestamp.Before(p.ReadySince.Add(p.Usage.Window)) {
			return podUnready
		}
	case p.Ready == corev1.ConditionFalse && p.Started.Add(f.in.InitialReadinessDelay).After(p.ReadySince):
		return podUnready
	}
	return podReady
}

// ratioFunc is a metric's usage ratio over values (a value per counted pod), and the
// current value it reports.
type ratioFunc func(values map[string]int64) (ratio float64, err error)

// replicasFor is kube's replica calculation over pooled pods: the ratio of the ready pods;
// with no unready pod on a scale-up and no missing pod, ceil(ratio x ready pods) unless
// within the tolerance; otherwise missing pods at fallback (a scale-down) or 0 (a scale-up),
// unready pods at 0 on a scale-up, and the ratio again over all of them: no change when it
// is within the tolerance, reverses the direction, or the count would.
func replicasFor(pl pooled, cur int32, tol tolerances, ratioOf ratioFunc, fallback func(pod string) int64) (int32, error) {
	ratio, err := ratioOf(pl.values)
	if err != nil {
		return 0, err
	}
	upWithUnready := len(pl.unready) > 0 && ratio > 1
	if !upWithUnready && len(pl.missing) == 0 {
		if tol.within(ratio) {
			return cur, nil
		}
		return ceil32(ratio * float64(pl.ready)), nil
	}
	values := conservative(pl, ratio, upWithUnready, fallback)
	again, err := ratioOf(values)
	if err != nil {
		return 0, err
	}
	if tol.within(again) || reverses(ratio, again) {
		return cur, nil
	}
	n := ceil32(again * float64(len(values)))
	if (again < 1 && n > cur) || (again > 1 && n < cur) {
		return cur, nil
	}
	return n, nil
}

// conservative is the ready pods' values with the missing pods at fallback on a scale-down
// (ratio below 1) or 0 on a scale-up, and the unready ones at 0 when upWithUnready.
func conservative(pl pooled, ratio float64, upWithUnready bool, fallback func(pod string) int64) map[string]int64 {
	values := make(map[string]int64, len(pl.values)+len(pl.missing)+len(pl.unready))
	for k, v := range pl.values {
		values[k] = v
	}
	for _, p := range pl.missing {
		switch {
		case ratio < 1:
			values[p] = fallback(p)
		case ratio > 1:
			values[p] = 0
		}
	}
	if upWithUnready {
		for _, p := range pl.unready {
			values[p] = 0
		}
	}
	return values
}

// reverses reports whether the second ratio turns the first's direction around.
func reverses(ratio, again float64) bool {
	return (ratio < 1 && again > 1) || (ratio > 1 && again < 1)
}

// utilization is the ratio of the pods' usage to their requests, in percent of the target:
// kube's integer utilization (usage x 100 / requests), over target. Pods without a request
// entry are not counted.
func utilization(requests map[string]int64, target int32) ratioFunc {
	return func(values map[string]int64) (float64, error) {
		util, _, err := utilizationOf(values, requests)
		if err != nil {
			return 0, err
		}
		return float64(util) / float64(target), nil
	}
}

// utilizationOf returns the pods' utilization (percent of requests) and average raw value.
func utilizationOf(values, requests map[string]int64) (util int32, avg int64, err error) {
	var used, requested int64
	n := 0
	for pod, v := range values {
		r, ok := requests[pod]
		if !ok {
			continue
		}
		used += v
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, fmt.Errorf("no pod with a sample has a request")
	}
	return int32(used * 100 / requested), used / int64(n), nil
}

// average is the ratio of the pods' average value to target (kube's integer average).
func average(target int64) ratioFunc {
	return func(values map[string]int64) (float64, error) {
		if len(values) == 0 {
			return 0, fmt.Errorf("no pod with a sample")
		}
		return float64(averageOf(values)) / float64(target), nil
	}
}

func averageOf(values map[string]int64) int64 {
	var sum int64
	for _, v := range values {
		sum += v
	}
	return sum / int64(len(values))
}

// ceil32 is ceil(x) as an int32, saturated.
func ceil32(x float64) int32 {
	c := math.Ceil(x)
	switch {
	case c >= math.MaxInt32:
		return math.MaxInt32
	case c <= 0:
		return 0
	}
	return int32(c)
}

// readyPods counts the running, Ready pods of p's clusters (the count Object and External
// Value metrics scale), and all their pods.
func readyPods(p part) (ready, all int) {
	for _, s := range p.reporting {
		for _, pod := range s.Pods {
			all++
			if pod.Phase == corev1.PodRunning && pod.Ready == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, all
}
