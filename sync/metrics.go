package sync

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	if m.reconciles, err = register(reg, reconciles); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, prometheus.Histogram(duration)); err != nil {
		return nil, err
	}
	if m.writes, err = register(reg, writes); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered under its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return c, err
		}
		existing, ok := are.ExistingCollector.(C)
		if !ok {
			return c, err
		}
		return existing, nil
	}
	return c, nil
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
