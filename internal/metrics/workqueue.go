package metrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// Workqueue is a client-go workqueue.MetricsProvider that reports into one registerer, in
// controller-runtime's work queue families: workqueue_depth, workqueue_adds_total,
// workqueue_queue_duration_seconds, workqueue_work_duration_seconds,
// workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds and
// workqueue_retries_total, labelled name and controller (both the queue's name) and, for the
// depth, priority ("": fedkit's queues have none). Their names, help, labels and buckets are
// controller-runtime's, so one dashboard reads both, and a registerer that already holds
// them (controller-runtime's metrics.Registry) gives fedkit its collectors instead of an
// error.
//
// A loop passes it to its own queue (workqueue.TypedRateLimitingQueueConfig.MetricsProvider),
// never to workqueue.SetProvider, which is global to the process: two fedkit control planes
// in one process, or fedkit next to controller-runtime (which sets the global provider when
// imported), would otherwise report into each other's registries.
type Workqueue struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = (*Workqueue)(nil)

// queueHistogram is controller-runtime's work queue histogram: 10ns to 1000s, and native
// buckets for the scrapers that take them.
func queueHistogram(name, help string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:                            name,
		Help:                            help,
		Buckets:                         prometheus.ExponentialBuckets(10e-9, 10, 12),
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  100,
		NativeHistogramMinResetDuration: time.Hour,
	}, []string{LabelName, LabelController})
}

// retriesHelp is the help controller-runtime gives workqueue_retries_total since v0.24,
// retriesHelpV023 the one of v0.23 and before. A registerer of an older controller-runtime
// holds the family with the older help, and a registry refuses a family whose help differs,
// so NewWorkqueue joins whichever it finds.
const (
	retriesHelp     = "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)"
	retriesHelpV023 = "Total number of retries handled by workqueue"
)

// NewWorkqueue returns a provider registered into reg, sharing the families another loop,
// or controller-runtime, registered there. reg must not be nil: without a registerer, a loop
// names no queue and client-go keeps no metrics at all.
func NewWorkqueue(reg prometheus.Registerer) (*Workqueue, error) {
	queue := []string{LabelName, LabelController}
	w := &Workqueue{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_depth",
			Help: "Current depth of workqueue by workqueue and priority",
		}, []string{LabelName, LabelController, LabelPriority}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_adds_total",
			Help: "Total number of adds handled by workqueue",
		}, queue),
		latency: queueHistogram("workqueue_queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested"),
		work:    queueHistogram("workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_unfinished_work_seconds",
			Help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
				"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		}, queue),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_longest_running_processor_seconds",
			Help: "How many seconds has the longest running processor for workqueue been running.",
		}, queue),
	}
	var retriesErr error
	w.retries, retriesErr = registerRetries(reg)
	if err := errors.Join(
		registerEach(reg, &w.depth, &w.unfinished, &w.longest),
		registerEach(reg, &w.adds),
		registerEach(reg, &w.latency, &w.work),
		retriesErr,
	); err != nil {
		return nil, err
	}
	return w, nil
}

// registerRetries registers workqueue_retries_total with controller-runtime's current help,
// or joins the family of an older controller-runtime already in reg.
func registerRetries(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	var errs []error
	for _, help := range []string{retriesHelp, retriesHelpV023} {
		c, err := Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_retries_total", Help: help,
		}, []string{LabelName, LabelController}))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// ForgetGauges deletes the gauges of the queue called name, whose values are only true while
// the queue exists: a loop that stops with keys still queued would otherwise leave its depth
// behind, and the queue of its next Run (after a leader election, say) would count on from
// there. Counters and histograms are kept, as a process keeps them across restarts of a loop.
func (w *Workqueue) ForgetGauges(name string) {
	w.depth.DeleteLabelValues(name, name, "")
	w.unfinished.DeleteLabelValues(name, name)
	w.longest.DeleteLabelValues(name, name)
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewDepthMetric(name string) workqueue.GaugeMetric {
	return w.depth.WithLabelValues(name, name, "")
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewAddsMetric(name string) workqueue.CounterMetric {
	return w.adds.WithLabelValues(name, name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return w.latency.WithLabelValues(name, name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return w.work.WithLabelValues(name, name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.unfinished.WithLabelValues(name, name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.longest.WithLabelValues(name, name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (w *Workqueue) NewRetriesMetric(name string) workqueue.CounterMetric {
	return w.retries.WithLabelValues(name, name)
}
