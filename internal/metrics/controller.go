package metrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fedkit/fedkit/federation"
)

// Values of LabelResult on controller_runtime_reconcile_total: controller-runtime's words for
// what became of a key taken from a queue. fedkit never requeues without a delay, so it
// never counts controller-runtime's "requeue".
const (
	// ReconcileSuccess: the pass returned no error and no RequeueAfter; the key is forgotten.
	ReconcileSuccess = "success"
	// ReconcileRequeueAfter: the pass returned no error and a RequeueAfter.
	ReconcileRequeueAfter = "requeue_after"
	// ReconcileError: the pass returned an error (a conflict and a terminal error included).
	ReconcileError = "error"
)

// Controllers are controller-runtime's reconcile families, which a loop's Run reports into
// for each key it takes from its queue, as a controller-runtime controller does for each
// request: controller_runtime_reconcile_total{controller,result},
// controller_runtime_reconcile_errors_total, controller_runtime_terminal_reconcile_errors_total,
// controller_runtime_reconcile_time_seconds, controller_runtime_max_concurrent_reconciles and
// controller_runtime_active_workers, labelled controller with the queue's name. Their names,
// help, labels and buckets are controller-runtime's, so a registerer that already holds them
// (controller-runtime's metrics.Registry) gives fedkit its collectors instead of an error.
//
// They count a loop's queue, not its passes: a Reconcile called from an embedder's own queue
// is counted by that queue (a controller-runtime controller counts it under its own name),
// and a key the DNS loop takes once counts once here however many record kinds its pass
// covers (fedkit_reconciles_total counts each).
type Controllers struct {
	total                 *prometheus.CounterVec
	errs, terminal        *prometheus.CounterVec
	time                  *prometheus.HistogramVec
	maxConcurrent, active *prometheus.GaugeVec
}

// NewControllers returns controller-runtime's reconcile families, registered into reg or
// shared with the ones registered there. reg must not be nil.
func NewControllers(reg prometheus.Registerer) (*Controllers, error) {
	controller := []string{LabelController}
	c := &Controllers{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total",
			Help: "Total number of reconciliations per controller",
		}, []string{LabelController, LabelResult}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_errors_total",
			Help: "Total number of reconciliation errors per controller",
		}, controller),
		terminal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_terminal_reconcile_errors_total",
			Help: "Total number of terminal reconciliation errors per controller",
		}, controller),
		time: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "controller_runtime_reconcile_time_seconds",
			Help: "Length of time per reconciliation per controller",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
				1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60},
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}, controller),
		maxConcurrent: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_max_concurrent_reconciles",
			Help: "Maximum number of concurrent reconciles per controller",
		}, controller),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_active_workers",
			Help: "Number of currently used workers per controller",
		}, controller),
	}
	if err := errors.Join(
		registerEach(reg, &c.total, &c.errs, &c.terminal),
		registerEach(reg, &c.time),
		registerEach(reg, &c.maxConcurrent, &c.active),
	); err != nil {
		return nil, err
	}
	return c, nil
}

// Controller is the series of one queue in Controllers. A nil *Controller records nothing
// (a loop without a registerer).
type Controller struct {
	c                              *Controllers
	name                           string
	success, requeueAfter, failure prometheus.Counter
	errs, terminal                 prometheus.Counter
	time                           prometheus.Observer
	active                         prometheus.Gauge
}

// Start returns the series of the queue called name, whose Run has workers workers at most,
// and sets them up as controller-runtime does when a controller starts: the counters at 0
// (so that a rate is defined from the start), the maximum of workers, and no active worker.
func (c *Controllers) Start(name string, workers int) *Controller {
	q := &Controller{
		c: c, name: name,
		success:      c.total.WithLabelValues(name, ReconcileSuccess),
		requeueAfter: c.total.WithLabelValues(name, ReconcileRequeueAfter),
		failure:      c.total.WithLabelValues(name, ReconcileError),
		errs:         c.errs.WithLabelValues(name),
		terminal:     c.terminal.WithLabelValues(name),
		time:         c.time.WithLabelValues(name),
		active:       c.active.WithLabelValues(name),
	}
	for _, counter := range []prometheus.Counter{q.success, q.requeueAfter, q.failure, q.errs, q.terminal} {
		counter.Add(0)
	}
	c.maxConcurrent.WithLabelValues(name).Set(float64(workers))
	q.active.Set(0)
	return q
}

// Begin records that a worker took a key: it is active until End.
func (q *Controller) Begin() {
	if q != nil {
		q.active.Inc()
	}
}

// End records the pass that Begin started: it returned res and err after d. An error counts
// as result "error" and in controller_runtime_reconcile_errors_total, and a terminal one
// (federation.IsTerminal, controller-runtime's reconcile.TerminalError) also in
// controller_runtime_terminal_reconcile_errors_total.
func (q *Controller) End(res federation.Result, err error, d time.Duration) {
	if q == nil {
		return
	}
	q.active.Dec()
	switch {
	case err != nil:
		if federation.IsTerminal(err) {
			q.terminal.Inc()
		}
		q.errs.Inc()
		q.failure.Inc()
	case res.RequeueAfter > 0:
		q.requeueAfter.Inc()
	default:
		q.success.Inc()
	}
	q.time.Observe(d.Seconds())
}

// Abandon records that the pass Begin started ended while its loop was stopping: its result
// is not used (the key is dropped), and it is not counted.
func (q *Controller) Abandon() {
	if q != nil {
		q.active.Dec()
	}
}

// Stop deletes the queue's gauges (its maximum and active workers), which are only true
// while its Run runs; the counters and the histogram are kept, as a process keeps them
// across restarts of a loop.
func (q *Controller) Stop() {
	if q == nil {
		return
	}
	q.c.maxConcurrent.DeleteLabelValues(q.name)
	q.c.active.DeleteLabelValues(q.name)
}
