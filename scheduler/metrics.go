package scheduler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// metrics are per Scheduler, registered into the embedder's registerer; a nil registerer
// leaves them unregistered (they still count, cheaply).
type metrics struct {
	reconciles *prometheus.CounterVec
	duration   prometheus.Observer
}

func newMetrics(reg prometheus.Registerer, kind string) (*metrics, error) {
	labels := prometheus.Labels{"kind": kind}
	m := &metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "fedkit_scheduler_reconciles_total",
			Help:        "Scheduler passes by outcome (scheduled, unchanged, invalid, error).",
			ConstLabels: labels,
		}, []string{"outcome"}),
	}
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "fedkit_scheduler_reconcile_seconds",
		Help:        "Time of one scheduler pass, reads and writes included.",
		ConstLabels: labels,
		Buckets:     prometheus.ExponentialBuckets(0.0005, 4, 8),
	})
	// A second Scheduler for the same kind shares the first one's collectors.
	var err error
	if m.reconciles, err = fedmetrics.Register(reg, m.reconciles); err != nil {
		return nil, err
	}
	if m.duration, err = fedmetrics.Register(reg, prometheus.Histogram(h)); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) observe(outcome string, start, end time.Time) {
	m.reconciles.WithLabelValues(outcome).Inc()
	m.duration.Observe(end.Sub(start).Seconds())
}
