package recommend

import (
	"fmt"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/quorum"
)

// Defaults of [Input], the kube-controller-manager's.
const (
	// DefaultSyncPeriod is how often the autoscaler looks at a preference by default: the
	// kube-controller-manager's --horizontal-pod-autoscaler-sync-period.
	DefaultSyncPeriod = 15 * time.Second
	// DefaultCPUInitializationPeriod is how long after a pod starts its cpu samples are
	// suspect: --horizontal-pod-autoscaler-cpu-initialization-period.
	DefaultCPUInitializationPeriod = 5 * time.Minute
	// DefaultInitialReadinessDelay is how long after a pod starts a not-Ready condition
	// counts as "never ready yet": --horizontal-pod-autoscaler-initial-readiness-delay.
	DefaultInitialReadinessDelay = 30 * time.Second
)

// Reasons of the ScalingActive condition besides kube's ValidMetricFound.
const (
	// ReasonValidMetricFound: a total was computed from at least one metric.
	ReasonValidMetricFound = "ValidMetricFound"
	// ReasonNoQuorum: fewer than a majority of the scheduled clusters have fresh data; the
	// total holds.
	ReasonNoQuorum = "NoQuorum"
	// ReasonInvalidMetrics: no metric could be computed, or some could not and the others
	// would scale down; the total holds.
	ReasonInvalidMetrics = "FailedGetMetrics"
	// ReasonNoClusters: the workload is scheduled nowhere; the total holds.
	ReasonNoClusters = "NoClusters"
)

// Input is what [Recommend] looks at: one preference's autoscaling spec, the fleet's total
// and what the members reported. It is plain data.
type Input struct {
	// Autoscale is spec.autoscale, defaulted ([federation.DefaultAutoscale]).
	Autoscale federation.Autoscale

	// Current is the fleet's total now ([federation.FleetTotal]): what a recommendation
	// changes, as an HPA's scale.spec.replicas.
	Current int32

	// Samples are the scheduled clusters' reports, one each.
	Samples []Sample

	// Now is the current time; StaleAfter how old a sample may be and count as fresh
	// (status's rule, [quorum.IsFresh]).
	Now        time.Time
	StaleAfter time.Duration

	// CPUInitializationPeriod and InitialReadinessDelay are the kube-controller-manager's
	// flags of the same names; zero: [DefaultCPUInitializationPeriod] and
	// [DefaultInitialReadinessDelay].
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
}

// Recommendation is the total the metrics ask for, before behavior, and how it came about.
// Treat it as read-only.
type Recommendation struct {
	// Active reports whether a total could be computed (an HPA's ScalingActive). When false
	// the total holds, and Reason and Message say why.
	Active bool
	// Replicas is the total the metrics ask for: the highest of the metrics' totals. Set
	// only when Active.
	Replicas int32
	// Reason and Message are the ScalingActive condition's.
	Reason, Message string
	// Metric is the index in Autoscale.Metrics of the metric that decided (-1: none).
	Metric int
	// Metrics are each metric's result, in Autoscale.Metrics' order.
	Metrics []MetricResult
	// Clusters are the samples' clusters, in name order, with whether their data counted.
	Clusters []ClusterResult
	// Fresh counts the clusters with fresh data, Placed the samples; Quorum reports whether
	// the fresh ones are a majority ([quorum.HasQuorum]).
	Fresh, Placed int
	Quorum        bool
}

// MetricResult is what one metric asked for.
type MetricResult struct {
	// Name is the metric's short name: "cpu", "memory of app", "requests-per-second",
	// "requests of Ingress/main".
	Name string
	// Replicas is the fleet's total the metric asks for; Err, when not empty, says why it
	// could not be computed (then Replicas means nothing).
	Replicas int32
	Err      string
	// Status is the metric's current value, an HPA's status.currentMetrics entry.
	Status autoscalingv2.MetricStatus
	// Summary says what the metric saw: "cpu 91% of 60% over 14 ready pods in 3 of 3
	// clusters".
	Summary string
	// Held lists the clusters whose share the metric held at what they run (stale, or not
	// reporting the metric), each with why.
	Held []string
}

// ClusterResult is one cluster's part in a recommendation.
type ClusterResult struct {
	Name string
	// Fresh reports whether its data counted.
	Fresh bool
	// Replicas is what it ran (or last ran).
	Replicas int32
	// Message says why its data did not count, or what it could not report.
	Message string
}

// Recommend computes the fleet's total from the members' samples, with an HPA's rules, for
// every metric, and takes the highest. It is a pure function.
//
// The fleet is the union of the fresh clusters' pods, counted as one HPA counts one
// cluster's (kube's replica calculator, facts ported in this package's stories):
//
//  1. Freshness and quorum are status's ([quorum.IsFresh], [quorum.HasQuorum]): without a
//     majority of fresh clusters there is no recommendation and the total holds. A stale
//     cluster's share holds at what it last ran: its replicas are added to what the fresh
//     clusters' pods ask for, never scaled on data nobody has.
//  2. A cluster that cannot report a metric (its metrics API not served, an adapter's
//     error: Sample.Failed) holds its share for that metric the same way. A metric reported
//     by fewer than a majority of the scheduled clusters cannot be computed (an External
//     metric, the same value wherever it is read, needs one).
//  3. Per metric, pods being deleted or failed are ignored; pending pods, and for cpu the
//     pods not ready or still starting (within CPUInitializationPeriod without a sample
//     taken since they turned ready, or never ready within InitialReadinessDelay of their
//     start), are unready: they count as using 0% on a scale-up and are left out
//     otherwise. Pods without a sample are missing: 100% of their request (or the target
//     above 100%) on a scale-down, 0% on a scale-up. A usage within the tolerance (0.1,
//     or the behavior's) of the target changes nothing, nor does a correction that would
//     reverse the direction.
//  4. Resource and Pods metrics are averaged over the pooled pods; an Object metric's value
//     is the sum of the members' (each has its copy of the object); an External metric's
//     is the highest a member reports (they read the same series).
//  5. The total is the highest metric's. A metric that cannot be computed is never read
//     as zero: when none can, or some cannot and the others ask for fewer replicas than
//     Current, there is no recommendation and the total holds (an HPA's rule).
func Recommend(in Input) Recommendation {
	in.complete()
	rec := Recommendation{Metric: -1, Placed: len(in.Samples)}
	fl := newFleet(&in)
	rec.Clusters, rec.Fresh = fl.clusters()
	rec.Quorum = quorum.HasQuorum(rec.Fresh, rec.Placed)
	switch {
	case rec.Placed == 0:
		rec.Reason, rec.Message = ReasonNoClusters, "the workload is scheduled in no cluster: the total holds"
		return rec
	case !rec.Quorum:
		rec.Reason = ReasonNoQuorum
		rec.Message = fmt.Sprintf("fresh data from %d of %d clusters, not a majority: the total holds; %s", rec.Fresh, rec.Placed, staleList(rec.Clusters))
		return rec
	}
	rec.Metrics = make([]MetricResult, len(in.Autoscale.Metrics))
	invalid := 0
	for i, m := range in.Autoscale.Metrics {
		rec.Metrics[i] = fl.compute(m)
		if rec.Metrics[i].Err != "" {
			invalid++
			continue
		}
		if rec.Metric < 0 || rec.Metrics[i].Replicas > rec.Replicas {
			rec.Metric, rec.Replicas = i, rec.Metrics[i].Replicas
		}
	}
	if invalid == len(rec.Metrics) || (invalid > 0 && rec.Replicas < in.Current) {
		rec.Reason, rec.Message = ReasonInvalidMetrics, invalidMessage(rec.Metrics, invalid, in.Current)
		rec.Metric, rec.Replicas = -1, 0
		return rec
	}
	rec.Active, rec.Reason = true, ReasonValidMetricFound
	rec.Message = rec.Metrics[rec.Metric].Summary
	return rec
}

// complete fills in the defaults.
func (in *Input) complete() {
	if in.CPUInitializationPeriod <= 0 {
		in.CPUInitializationPeriod = DefaultCPUInitializationPeriod
	}
	if in.InitialReadinessDelay <= 0 {
		in.InitialReadinessDelay = DefaultInitialReadinessDelay
	}
}

// invalidMessage says which metrics failed and why the total holds.
func invalidMessage(ms []MetricResult, invalid int, current int32) string {
	var failed []string
	for _, m := range ms {
		if m.Err != "" {
			failed = append(failed, m.Name+": "+m.Err)
		}
	}
	if invalid == len(ms) {
		return fmt.Sprintf("no metric could be computed, the total holds at %d: %s", current, strings.Join(failed, "; "))
	}
	return fmt.Sprintf("%d of %d metrics could not be computed and the others would scale down: the total holds at %d: %s",
		invalid, len(ms), current, strings.Join(failed, "; "))
}

// staleList names the clusters whose data did not count, with why.
func staleList(cs []ClusterResult) string {
	var out []string
	for _, c := range cs {
		if !c.Fresh {
			out = append(out, c.Name+" ("+c.Message+")")
		}
	}
	return "no fresh data from: " + strings.Join(out, ", ")
}

// fleet is the samples of one recommendation, sorted by cluster, with their freshness.
type fleet struct {
	in      *Input
	samples []Sample
	fresh   []bool
	tol     tolerances
}

func newFleet(in *Input) *fleet {
	f := &fleet{in: in, samples: slices.Clone(in.Samples), tol: tolerancesOf(in.Autoscale.Behavior)}
	slices.SortFunc(f.samples, func(a, b Sample) int { return strings.Compare(a.Cluster, b.Cluster) })
	f.fresh = make([]bool, len(f.samples))
	for i, s := range f.samples {
		f.fresh[i] = quorum.IsFresh(s.ClusterReady, s.Read, in.Now, in.StaleAfter)
	}
	return f
}

// clusters returns each cluster's part and the number of fresh ones.
func (f *fleet) clusters() ([]ClusterResult, int) {
	out := make([]ClusterResult, len(f.samples))
	fresh := 0
	for i, s := range f.samples {
		out[i] = ClusterResult{Name: s.Cluster, Fresh: f.fresh[i], Replicas: s.Replicas}
		switch {
		case f.fresh[i]:
			fresh++
		case s.Message != "":
			out[i].Message = s.Message
		case !s.ClusterReady:
			out[i].Message = "Cluster not Ready"
		case s.Read.IsZero():
			out[i].Message = "not read"
		default:
			out[i].Message = fmt.Sprintf("last read %s ago", f.in.Now.Sub(s.Read).Truncate(time.Second))
		}
	}
	return out, fresh
}

// part is the clusters that report one metric, and the share held for the others.
type part struct {
	reporting []*Sample
	held      int32
	why       []string
}

// split divides the samples for the metric of key: fresh clusters that report it, and the
// others, whose replicas hold.
func (f *fleet) split(key string) part {
	var p part
	for i := range f.samples {
		s := &f.samples[i]
		why := ""
		switch {
		case !f.fresh[i]:
			why = "stale"
		case s.Failed[key] != "":
			why = s.Failed[key]
		}
		if why != "" {
			p.held += s.Replicas
			p.why = append(p.why, fmt.Sprintf("%s holds %d (%s)", s.Cluster, s.Replicas, why))
			continue
		}
		p.reporting = append(p.reporting, s)
	}
	return p
}

// current is the part of Current the reporting clusters make up: Current less what holds.
func (f *fleet) current(p part) int32 {
	return max(f.in.Current-p.held, 0)
}

// clustersPhrase is "in N of M clusters".
func (f *fleet) clustersPhrase(p part) string {
	if len(f.samples) == 1 {
		return fmt.Sprintf("in %d of 1 cluster", len(p.reporting))
	}
	return fmt.Sprintf("in %d of %d clusters", len(p.reporting), len(f.samples))
}

// StaleAfter is the default Input.StaleAfter for a loop that samples every period: three
// periods, so that a member read once a period counts until it missed two reads.
func StaleAfter(period time.Duration) time.Duration { return 3 * period }
