package status

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Metrics are per loop, registered into the embedder's registerer; a nil registerer leaves
// them unregistered (they still count, cheaply). A second loop of the same kind registered
// into the same registerer shares the first one's collectors.

// collectorMetrics are the Collector's: the shared reconcile and member request families,
// and fedkit_status_stale_members.
type collectorMetrics struct {
	reconciles *fedmetrics.Reconciles
	members    *fedmetrics.Members
	kind       string
	stale      *prometheus.GaugeVec

	// staleIn remembers, per federated object, the clusters whose entry was stale after its
	// last pass, so the gauge moves by differences and an object that goes is subtracted.
	mu         sync.Mutex
	staleIn    map[federation.Key]map[string]bool
	staleCount map[string]int
}

func newCollectorMetrics(reg prometheus.Registerer, kind string) (*collectorMetrics, error) {
	r, err := fedmetrics.NewReconciles(reg, fedmetrics.LoopStatus, kind)
	if err != nil {
		return nil, err
	}
	members, err := fedmetrics.NewMembers(reg, fedmetrics.LoopStatus)
	if err != nil {
		return nil, err
	}
	stale, err := fedmetrics.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fedkit_status_stale_members",
		Help: "Federated objects whose entry for a cluster is stale (no fresh data within the Collector's StaleAfter), by federated type and cluster. A cluster's series goes when no entry of it is stale.",
	}, []string{fedmetrics.LabelType, fedmetrics.LabelCluster}))
	if err != nil {
		return nil, err
	}
	return &collectorMetrics{reconciles: r, members: members, kind: kind, stale: stale,
		staleIn: map[federation.Key]map[string]bool{}, staleCount: map[string]int{}}, nil
}

func (m *collectorMetrics) observe(outcome string, err error, start, end time.Time) {
	m.reconciles.Observe(outcome, err, start, end)
}

// setStale records that key's entries of clusters are the stale ones now (none: nil).
func (m *collectorMetrics) setStale(key federation.Key, clusters map[string]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.staleIn[key]
	for c := range clusters {
		if !old[c] {
			m.addStale(c, 1)
		}
	}
	for c := range old {
		if !clusters[c] {
			m.addStale(c, -1)
		}
	}
	if len(clusters) == 0 {
		delete(m.staleIn, key)
	} else {
		m.staleIn[key] = clusters
	}
}

// addStale moves cluster's count of stale entries by d, deleting its series at zero so that
// a cluster's series does not outlive its last stale entry. m.mu is held.
func (m *collectorMetrics) addStale(cluster string, d int) {
	n := m.staleCount[cluster] + d
	if n <= 0 {
		delete(m.staleCount, cluster)
		m.stale.DeleteLabelValues(m.kind, cluster)
		return
	}
	m.staleCount[cluster] = n
	m.stale.WithLabelValues(m.kind, cluster).Set(float64(n))
}

// forgetCluster drops every series of a cluster that left the federation, and what the
// Collector remembers of it.
func (m *collectorMetrics) forgetCluster(cluster string) {
	m.mu.Lock()
	for key, cs := range m.staleIn {
		delete(cs, cluster)
		if len(cs) == 0 {
			delete(m.staleIn, key)
		}
	}
	delete(m.staleCount, cluster)
	m.stale.DeleteLabelValues(m.kind, cluster)
	m.mu.Unlock()
	m.members.ForgetCluster(cluster)
}

// monitorMetrics are the ClusterMonitor's: the shared reconcile and member request families
// (probes are requests with verb "probe"), and fedkit_cluster_ready.
type monitorMetrics struct {
	reconciles *fedmetrics.Reconciles
	members    *fedmetrics.Members
	ready      *prometheus.GaugeVec
}

func newMonitorMetrics(reg prometheus.Registerer) (*monitorMetrics, error) {
	r, err := fedmetrics.NewReconciles(reg, fedmetrics.LoopMonitor, "Cluster")
	if err != nil {
		return nil, err
	}
	members, err := fedmetrics.NewMembers(reg, fedmetrics.LoopMonitor)
	if err != nil {
		return nil, err
	}
	ready, err := fedmetrics.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fedkit_cluster_ready",
		Help: "1 when the Cluster's Ready condition is True, 0 otherwise, by cluster.",
	}, []string{fedmetrics.LabelCluster}))
	if err != nil {
		return nil, err
	}
	return &monitorMetrics{reconciles: r, members: members, ready: ready}, nil
}

// forget drops a deleted cluster's series.
func (m *monitorMetrics) forget(cluster string) {
	m.members.ForgetCluster(cluster)
	m.ready.DeleteLabelValues(cluster)
}
