package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Workqueue is a client-go workqueue.MetricsProvider that reports into one registerer, in
// families labelled with the queue's name (LabelName). A loop passes it to its own queue
// (workqueue.TypedRateLimitingQueueConfig.MetricsProvider), never to workqueue.SetProvider,
// which is global to the process: two fedkit control planes in one process, or fedkit next
// to controller-runtime (which sets the global provider when imported), would otherwise
// report into each other's registries.
//
// The families and their meaning are client-go's, as controller-runtime exports them, with
// the fedkit_ prefix.
type Workqueue struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = (*Workqueue)(nil)

// queueBuckets are client-go's and controller-runtime's for work queues: 1µs to 10s.
var queueBuckets = prometheus.ExponentialBuckets(1e-6, 10, 8)

// NewWorkqueue returns a provider registered into reg, sharing the families another loop
// registered there. reg must not be nil: without a registerer, a loop names no queue and
// client-go keeps no metrics at all.
func NewWorkqueue(reg prometheus.Registerer) (*Workqueue, error) {
	name := []string{LabelName}
	w := &Workqueue{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fedkit_workqueue_depth",
			Help: "Keys waiting in a loop's work queue, by queue name.",
		}, name),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fedkit_workqueue_adds_total",
			Help: "Keys added to a loop's work queue (a key already waiting is added again and counted), by queue name.",
		}, name),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fedkit_workqueue_queue_duration_seconds",
			Help:    "Time a key waits in a loop's work queue before a worker takes it, by queue name.",
			Buckets: queueBuckets,
		}, name),
		work: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fedkit_workqueue_work_duration_seconds",
			Help:    "Time a worker spends on one key taken from a loop's work queue, by queue name.",
			Buckets: queueBuckets,
		}, name),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fedkit_workqueue_unfinished_work_seconds",
			Help: "Sum of the time the keys being worked on have been in progress, by queue name; a value that keeps growing points at a stuck worker.",
		}, name),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fedkit_workqueue_longest_running_processor_seconds",
			Help: "Time the longest-running worker of a loop's work queue has spent on its key, by queue name.",
		}, name),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fedkit_workqueue_retries_total",
			Help: "Keys put back into a loop's work queue with backoff after a failed pass, by queue name.",
		}, name),
	}
	var err error
	for _, g := range []**prometheus.GaugeVec{&w.depth, &w.unfinished, &w.longest} {
		if *g, err = Register(reg, *g); err != nil {
			return nil, err
		}
	}
	for _, c := range []**prometheus.CounterVec{&w.adds, &w.retries} {
		if *c, err = Register(reg, *c); err != nil {
			return nil, err
		}
	}
	for _, h := range []**prometheus.HistogramVec{&w.latency, &w.work} {
		if *h, err = Register(reg, *h); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// ForgetGauges deletes the gauges of the queue called name, whose values are only true while
// the queue exists: a loop that stops with keys still queued would otherwise leave its depth
// behind, and the queue of its next Run (after a leader election, say) would count on from
// there. Counters and histograms are kept, as a process keeps them across restarts of a loop.
func (w *Workqueue) ForgetGauges(name string) {
	for _, g := range []*prometheus.GaugeVec{w.depth, w.unfinished, w.longest} {
		g.DeleteLabelValues(name)
	}
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewDepthMetric(name string) workqueue.GaugeMetric {
	return w.depth.WithLabelValues(name)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewAddsMetric(name string) workqueue.CounterMetric {
	return w.adds.WithLabelValues(name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return w.latency.WithLabelValues(name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return w.work.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.unfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.longest.WithLabelValues(name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewRetriesMetric(name string) workqueue.CounterMetric {
	return w.retries.WithLabelValues(name)
}
