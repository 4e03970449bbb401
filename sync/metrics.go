package sync

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// metrics are per Syncer, registered into the embedder's registerer; a nil registerer leaves
// them unregistered (they still count, cheaply). A second Syncer for the same kind shares the
// first one's collectors.
type metrics struct {
	reconciles *prometheus.CounterVec
	duration   prometheus.Observer
	writes     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, kind string) (*metrics, error) {
	labels := prometheus.Labels{"kind": kind}
	reconciles := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "fedkit_sync_reconciles_total",
		Help:        "Sync passes by outcome (synced, unchanged, invalid, error).",
		ConstLabels: labels,
	}, []string{"outcome"})
	duration := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "fedkit_sync_reconcile_seconds",
		Help:        "Time of one sync pass, member reads and writes included.",
		ConstLabels: labels,
		Buckets:     prometheus.ExponentialBuckets(0.0005, 4, 9),
	})
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "fedkit_sync_member_writes_total",
		Help:        "Writes to member clusters by cluster, action (create, update, delete, orphan) and result (ok, error).",
		ConstLabels: labels,
	}, []string{"cluster", "action", "result"})
	m := &metrics{reconciles: reconciles, duration: duration, writes: writes}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.reconciles, err = fedmetrics.Register(reg, reconciles); err != nil {
		return nil, err
	}
	if m.duration, err = fedmetrics.Register(reg, prometheus.Histogram(duration)); err != nil {
		return nil, err
	}
	if m.writes, err = fedmetrics.Register(reg, writes); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) observe(outcome string, start, end time.Time) {
	m.reconciles.WithLabelValues(outcome).Inc()
	m.duration.Observe(end.Sub(start).Seconds())
}

func (m *metrics) write(cluster string, a Action, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.writes.WithLabelValues(cluster, string(a), result).Inc()
}
