package recommend

import (
	"fmt"
	"math"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/quorum"
)

const defaultTolerance = federation.DefaultTolerance

// computers is the table of metric source types: each computes the fleet's total for one
// metric of its type.
var computers = map[autoscalingv2.MetricSourceType]func(*fleet, autoscalingv2.MetricSpec) MetricResult{
	autoscalingv2.ResourceMetricSourceType:          (*fleet).resource,
	autoscalingv2.ContainerResourceMetricSourceType: (*fleet).resource,
	autoscalingv2.PodsMetricSourceType:              (*fleet).pods,
	autoscalingv2.ObjectMetricSourceType:            (*fleet).object,
	autoscalingv2.ExternalMetricSourceType:          (*fleet).external,
}

// compute is one metric's result.
func (f *fleet) compute(m autoscalingv2.MetricSpec) MetricResult {
	c, ok := computers[m.Type]
	if !ok || !hasSource(m) {
		return MetricResult{Name: string(m.Type), Err: fmt.Sprintf("unsupported metric type %q", m.Type)}
	}
	return c(f, m)
}

func hasSource(m autoscalingv2.MetricSpec) bool {
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		return m.Resource != nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		return m.ContainerResource != nil
	case autoscalingv2.PodsMetricSourceType:
		return m.Pods != nil
	case autoscalingv2.ObjectMetricSourceType:
		return m.Object != nil
	}
	return m.External != nil
}

// reported applies the per-metric quorum: a metric summed over the members needs a majority
// of the scheduled clusters reporting it.
func (f *fleet) reported(name string, p part) (MetricResult, bool) {
	r := MetricResult{Name: name, Held: p.why}
	if !quorum.HasQuorum(len(p.reporting), len(f.samples)) {
		r.Err = fmt.Sprintf("reported by %d of %d clusters, not a majority (%s)", len(p.reporting), len(f.samples), strings.Join(p.why, ", "))
		return r, false
	}
	return r, true
}

// resource computes a Resource or ContainerResource metric over the pooled pods.
func (f *fleet) resource(m autoscalingv2.MetricSpec) MetricResult {
	res, container, target := resourceOf(m)
	name := string(res)
	if container != "" {
		name += " of " + container
	}
	p := f.split(ResourceMetricsKey)
	r, ok := f.reported(name, p)
	if !ok {
		return r
	}
	requests, err := requestsOf(p, res, container)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	pl := f.pool(p, usageOf(res, container), res == corev1.ResourceCPU)
	cur := f.current(p)
	status := autoscalingv2.MetricStatus{Type: m.Type}
	var n int32
	var current string
	switch {
	case pl.pods == 0:
		err = fmt.Errorf("no pods %s", f.clustersPhrase(p))
	case len(pl.values) == 0:
		err = fmt.Errorf("no sample for any ready pod %s (pods might be unready)", f.clustersPhrase(p))
	case target.Type == autoscalingv2.UtilizationMetricType:
		goal := ptr.Deref(target.AverageUtilization, 0)
		n, err = replicasFor(pl, cur, f.tol, utilization(requests, goal), func(pod string) int64 { return requests[pod] * int64(max(100, goal)) / 100 })
		util, avg, _ := utilizationOf(pl.values, requests)
		status.Resource, status.ContainerResource = resourceStatus(m, res, container, &util, avg)
		current = fmt.Sprintf("%d%% of %d%%", util, goal)
	default:
		goal := target.AverageValue.MilliValue()
		n, err = replicasFor(pl, cur, f.tol, average(goal), func(string) int64 { return goal })
		avg := averageOf(pl.values)
		status.Resource, status.ContainerResource = resourceStatus(m, res, container, nil, avg)
		current = fmt.Sprintf("%s of %s", milli(avg), milli(goal))
	}
	return f.finish(r, p, pl, n, err, status, current)
}

// finish fills r in from a pooled computation: the total (what the reporting clusters ask
// for, plus what holds), the status, the summary.
func (f *fleet) finish(r MetricResult, p part, pl pooled, n int32, err error, st autoscalingv2.MetricStatus, current string) MetricResult {
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Replicas, r.Status = AddReplicas(n, p.held), st
	r.Summary = fmt.Sprintf("%s %s over %s %s", r.Name, current, count(pl.ready, "ready pod"), f.clustersPhrase(p))
	return r
}

// pods computes a Pods metric over the pooled pods.
func (f *fleet) pods(m autoscalingv2.MetricSpec) MetricResult {
	key := MetricKey(m)
	p := f.split(key)
	r, ok := f.reported(m.Pods.Metric.Name, p)
	if !ok {
		return r
	}
	pl := f.pool(p, func(pod *Pod) (int64, bool) { v, ok := pod.Values[key]; return v, ok }, false)
	goal := m.Pods.Target.AverageValue.MilliValue()
	var n int32
	var err error
	switch {
	case pl.pods == 0:
		err = fmt.Errorf("no pods %s", f.clustersPhrase(p))
	case len(pl.values) == 0:
		err = fmt.Errorf("no value for any ready pod %s", f.clustersPhrase(p))
	default:
		n, err = replicasFor(pl, f.current(p), f.tol, average(goal), func(string) int64 { return goal })
	}
	avg := int64(0)
	if len(pl.values) > 0 {
		avg = averageOf(pl.values)
	}
	st := autoscalingv2.MetricStatus{Type: m.Type, Pods: &autoscalingv2.PodsMetricStatus{
		Metric: m.Pods.Metric, Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)},
	}}
	return f.finish(r, p, pl, n, err, st, fmt.Sprintf("%s of %s", milli(avg), milli(goal)))
}

// object computes an Object metric: the sum of the members' values (each has its copy of
// the described object), against a Value (scaled by the ready pods) or an AverageValue
// target (per replica).
func (f *fleet) object(m autoscalingv2.MetricSpec) MetricResult {
	key := MetricKey(m)
	o := m.Object
	p := f.split(key)
	p = f.withValues(p, key)
	r, ok := f.reported(fmt.Sprintf("%s of %s/%s", o.Metric.Name, o.DescribedObject.Kind, o.DescribedObject.Name), p)
	if !ok {
		return r
	}
	var sum int64
	for _, s := range p.reporting {
		sum = AddMilli(sum, s.Values[key].Milli)
	}
	r.Status = autoscalingv2.MetricStatus{Type: m.Type, Object: &autoscalingv2.ObjectMetricStatus{
		Metric: o.Metric, DescribedObject: o.DescribedObject, Current: valueStatus(o.Target, sum, f.running(p)),
	}}
	return f.scaleByValue(r, p, o.Target, sum)
}

// external computes an External metric: the highest value a member reports (they read the
// same series), against a Value (scaled by the ready pods) or an AverageValue target (the
// fleet's total). One reporting member is enough.
func (f *fleet) external(m autoscalingv2.MetricSpec) MetricResult {
	key := MetricKey(m)
	p := f.withValues(f.split(key), key)
	r := MetricResult{Name: m.External.Metric.Name, Held: p.why}
	if len(p.reporting) == 0 {
		r.Err = "reported by no cluster (" + strings.Join(p.why, ", ") + ")"
		return r
	}
	var v int64
	for _, s := range p.reporting {
		v = max(v, s.Values[key].Milli)
	}
	t := m.External.Target
	r.Status = autoscalingv2.MetricStatus{Type: m.Type, External: &autoscalingv2.ExternalMetricStatus{
		Metric: m.External.Metric, Current: valueStatus(t, v, f.running(part{reporting: f.allSamples()})),
	}}
	if t.Type == autoscalingv2.AverageValueMetricType {
		// A quantity of the whole fleet's work: the fleet's total, nothing held apart.
		all := part{reporting: f.allSamples()}
		return f.perReplica(r, all, t.AverageValue.MilliValue(), v, f.clustersPhrase(p))
	}
	return f.scaleByValue(r, p, t, v)
}

// withValues moves the reporting clusters that have no value for key to the held ones.
func (f *fleet) withValues(p part, key string) part {
	out := part{held: p.held, why: p.why}
	for _, s := range p.reporting {
		if _, ok := s.Values[key]; ok {
			out.reporting = append(out.reporting, s)
			continue
		}
		out.held += s.Replicas
		out.why = append(out.why, fmt.Sprintf("%s holds %d (no value)", s.Cluster, s.Replicas))
	}
	return out
}

// scaleByValue is kube's Object and External metric rule for value v: against a Value
// target, with a current total of 0 ceil(ratio), else Current unless outside the tolerance,
// then ceil(ratio x ready pods); against an AverageValue, per replica.
func (f *fleet) scaleByValue(r MetricResult, p part, t autoscalingv2.MetricTarget, v int64) MetricResult {
	if t.Type == autoscalingv2.AverageValueMetricType {
		return f.perReplica(r, p, t.AverageValue.MilliValue(), v, f.clustersPhrase(p))
	}
	goal := t.Value.MilliValue()
	ratio := float64(v) / float64(goal)
	cur := f.current(p)
	ready, all := readyPods(p)
	r.Summary = fmt.Sprintf("%s %s of %s over %s %s", r.Name, milli(v), milli(goal), count(int(ready), "ready pod"), f.clustersPhrase(p))
	switch {
	case f.in.Current == 0:
		r.Replicas = ceil32(ratio)
	case f.tol.within(ratio):
		r.Replicas = AddReplicas(cur, p.held)
	case ready == 0:
		// kube would ask for 0 replicas; no ready pod says nothing about the load.
		r.Err = fmt.Sprintf("no ready pod of %d %s to scale by", all, f.clustersPhrase(p))
	default:
		r.Replicas = AddReplicas(ceil32(ratio*float64(ready)), p.held)
	}
	return r
}

// perReplica is kube's per-pod rule for value v and a target average: the replicas p's
// clusters run, unless v over them is outside the tolerance: then ceil(v / average). phrase
// says which clusters reported v.
func (f *fleet) perReplica(r MetricResult, p part, avg, v int64, phrase string) MetricResult {
	running := f.running(p)
	r.Replicas = running
	if ratio := float64(v) / (float64(avg) * float64(running)); !f.tol.within(ratio) {
		r.Replicas = ceil32(float64(v) / float64(avg))
	}
	r.Replicas = AddReplicas(r.Replicas, p.held)
	per := int64(0)
	if running > 0 {
		per = int64(math.Ceil(float64(v) / float64(running)))
	}
	r.Summary = fmt.Sprintf("%s %s per replica of %s over %s, %s", r.Name, milli(per), milli(avg), count(int(running), "replica"), phrase)
	return r
}

// running is what p's clusters run.
func (f *fleet) running(p part) int32 {
	var n int32
	for _, s := range p.reporting {
		n = AddReplicas(n, s.Replicas)
	}
	return n
}

func (f *fleet) allSamples() []*Sample {
	out := make([]*Sample, 0, len(f.samples))
	for i := range f.samples {
		if f.fresh[i] {
			out = append(out, &f.samples[i])
		}
	}
	return out
}

// valueStatus is the current value of an Object or External metric, in the target's terms.
func valueStatus(t autoscalingv2.MetricTarget, v int64, running int32) autoscalingv2.MetricValueStatus {
	if t.Type == autoscalingv2.AverageValueMetricType && running > 0 {
		return autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(int64(math.Ceil(float64(v)/float64(running))), resource.DecimalSI)}
	}
	return autoscalingv2.MetricValueStatus{Value: resource.NewMilliQuantity(v, resource.DecimalSI)}
}

// resourceOf returns a Resource or ContainerResource metric's resource, container and
// target.
func resourceOf(m autoscalingv2.MetricSpec) (corev1.ResourceName, string, autoscalingv2.MetricTarget) {
	if m.ContainerResource != nil {
		return m.ContainerResource.Name, m.ContainerResource.Container, m.ContainerResource.Target
	}
	return m.Resource.Name, "", m.Resource.Target
}

// resourceStatus is a Resource or ContainerResource metric's current value.
func resourceStatus(m autoscalingv2.MetricSpec, res corev1.ResourceName, container string, util *int32, avg int64) (*autoscalingv2.ResourceMetricStatus, *autoscalingv2.ContainerResourceMetricStatus) {
	cur := autoscalingv2.MetricValueStatus{AverageUtilization: util, AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)}
	if m.Type == autoscalingv2.ContainerResourceMetricSourceType {
		return nil, &autoscalingv2.ContainerResourceMetricStatus{Name: res, Container: container, Current: cur}
	}
	return &autoscalingv2.ResourceMetricStatus{Name: res, Current: cur}, nil
}

// usageOf reads a pod's usage of res: the sum over its containers, or one container's. A pod
// whose sample lacks the resource in a container (or lacks the container) has none.
func usageOf(res corev1.ResourceName, container string) valueFunc {
	return func(p *Pod) (int64, bool) {
		if p.Usage == nil || len(p.Usage.Containers) == 0 {
			return 0, false
		}
		if container != "" {
			v, ok := p.Usage.Containers[container][res]
			return v, ok
		}
		var sum int64
		for _, c := range p.Usage.Containers {
			v, ok := c[res]
			if !ok {
				return 0, false
			}
			sum += v
		}
		return sum, true
	}
}

// requestsOf returns each pod's request of res (its containers' sum, or one container's),
// keyed "cluster/pod", for the pods kube counts. A counted pod without the request makes the
// metric fail, as for an HPA ("missing request for cpu").
func requestsOf(p part, res corev1.ResourceName, container string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, s := range p.reporting {
		for _, pod := range s.Pods {
			if pod.Deleting || pod.Phase == corev1.PodFailed {
				continue
			}
			r, err := requestOf(pod, res, container)
			if err != nil {
				return nil, fmt.Errorf("%s in pod %s of cluster %s", err, pod.Name, s.Cluster)
			}
			out[s.Cluster+"/"+pod.Name] = r
		}
	}
	return out, nil
}

func requestOf(pod Pod, res corev1.ResourceName, container string) (int64, error) {
	var sum int64
	found := false
	for _, c := range pod.Containers {
		if container != "" && c.Name != container {
			continue
		}
		found = true
		r, ok := c.Requests[res]
		if !ok {
			return 0, fmt.Errorf("missing request for %s", res)
		}
		sum += r
	}
	if !found {
		return 0, fmt.Errorf("no container %q", container)
	}
	return sum, nil
}

// AddReplicas is a+b saturated: a sum of the members' replicas never wraps.
func AddReplicas(a, b int32) int32 {
	if s := int64(a) + int64(b); s < math.MaxInt32 {
		return int32(s)
	}
	return math.MaxInt32
}

// AddMilli is a+b saturated, for sums of milli-values.
func AddMilli(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// milli formats a milli-value as a quantity ("1500m", "2", "10k").
func milli(v int64) string {
	return resource.NewMilliQuantity(v, resource.DecimalSI).String()
}

// count is "1 pod", "2 pods".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
