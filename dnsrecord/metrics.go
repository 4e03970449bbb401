package dnsrecord

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// metrics are per Controller, registered into the embedder's registerer; a nil registerer
// leaves them unregistered (they still count, cheaply). A second Controller on the same
// registerer shares the first one's collectors.
type metrics struct {
	reconciles *prometheus.CounterVec
	writes     *prometheus.CounterVec
	duration   prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fedkit_dns_reconciles_total",
			Help: "DNS record passes by record kind and outcome (written, unchanged, invalid, deleted, error).",
		}, []string{"kind", "outcome"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fedkit_dns_endpoint_writes_total",
			Help: "DNSEndpoint writes by record kind and operation (create, update, delete).",
		}, []string{"kind", "op"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "fedkit_dns_reconcile_seconds",
			Help:    "Time of one DNS pass over a key (both record kinds), reads and writes included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 8),
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.reconciles, err = fedmetrics.Register(reg, m.reconciles); err != nil {
		return nil, err
	}
	if m.writes, err = fedmetrics.Register(reg, m.writes); err != nil {
		return nil, err
	}
	if m.duration, err = fedmetrics.Register(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) observe(start, end time.Time) {
	m.duration.Observe(end.Sub(start).Seconds())
}

func (m *metrics) outcome(kind, outcome string) {
	m.reconciles.WithLabelValues(kind, outcome).Inc()
}

func (m *metrics) write(kind, op string) {
	m.writes.WithLabelValues(kind, op).Inc()
}
