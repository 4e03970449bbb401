package status

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Metrics are per loop, registered into the embedder's registerer; a nil registerer leaves
// them unregistered (they still count, cheaply). A second loop of the same kind registered
// into the same registerer shares the first one's collectors.

// collectorMetrics are the Collector's (fedkit_status_*).
type collectorMetrics struct {
	reconciles *prometheus.CounterVec
	reads      *prometheus.CounterVec
	duration   prometheus.Histogram
}

func newCollectorMetrics(reg prometheus.Registerer, kind string) (*collectorMetrics, error) {
	labels := prometheus.Labels{"kind": kind}
	m := &collectorMetrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "fedkit_status_reconciles_total",
			Help:        "Collector passes by outcome (written, unchanged, gone, invalid, error).",
			ConstLabels: labels,
		}, []string{"outcome"}),
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "fedkit_status_member_reads_total",
			Help:        "Member object reads by result (ok, missing, invalid, error).",
			ConstLabels: labels,
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "fedkit_status_reconcile_seconds",
			Help:        "Time of one Collector pass, member reads and the write included.",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(0.0005, 4, 8),
		}),
	}
	var err error
	if m.reconciles, err = fedmetrics.Register(reg, m.reconciles); err != nil {
		return nil, err
	}
	if m.reads, err = fedmetrics.Register(reg, m.reads); err != nil {
		return nil, err
	}
	if m.duration, err = fedmetrics.Register(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *collectorMetrics) observe(outcome string, start, end time.Time) {
	m.reconciles.WithLabelValues(outcome).Inc()
	m.duration.Observe(end.Sub(start).Seconds())
}

func (m *collectorMetrics) read(result string) { m.reads.WithLabelValues(result).Inc() }

// monitorMetrics are the ClusterMonitor's (fedkit_cluster_*).
type monitorMetrics struct {
	probes *prometheus.CounterVec
	ready  *prometheus.GaugeVec
	writes *prometheus.CounterVec
}

func newMonitorMetrics(reg prometheus.Registerer) (*monitorMetrics, error) {
	m := &monitorMetrics{
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fedkit_cluster_probes_total",
			Help: "Health probes of member clusters by result (success, failure).",
		}, []string{"cluster", "result"}),
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fedkit_cluster_ready",
			Help: "1 when the Cluster's Ready condition is True, 0 otherwise.",
		}, []string{"cluster"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fedkit_cluster_writes_total",
			Help: "Writes of Cluster objects by the monitor, by part (status, taints).",
		}, []string{"part"}),
	}
	var err error
	if m.probes, err = fedmetrics.Register(reg, m.probes); err != nil {
		return nil, err
	}
	if m.ready, err = fedmetrics.Register(reg, m.ready); err != nil {
		return nil, err
	}
	if m.writes, err = fedmetrics.Register(reg, m.writes); err != nil {
		return nil, err
	}
	return m, nil
}

// forget drops a deleted cluster's series.
func (m *monitorMetrics) forget(cluster string) {
	m.probes.DeletePartialMatch(prometheus.Labels{"cluster": cluster})
	m.ready.DeleteLabelValues(cluster)
}
