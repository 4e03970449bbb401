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
// into the same registerer shares the first one's collectors: fedkit_status_stale_members
// sums what each Collector counts, and each loop's gauges go when its Run returns.

// collectorMetrics are the Collector's: the shared reconcile and member request families,
// and fedkit_status_stale_members.
type collectorMetrics struct {
	reconciles *fedmetrics.Reconciles
	members    *fedmetrics.Members
	kind       string
	stale      *staleMembers

	// staleIn remembers, per federated object, the clusters whose entry was stale after its
	// last pass, so the gauge moves by differences and an object that goes is subtracted;
	// staleCount is this Collector's contribution per cluster.
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
	stale, err := fedmetrics.Register(reg, newStaleMembers())
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

// addStale moves this Collector's count of cluster's stale entries by d, and the shared
// family's with it. m.mu is held.
func (m *collectorMetrics) addStale(cluster string, d int) {
	n := m.staleCount[cluster] + d
	if n <= 0 {
		d -= n // never subtract more than this Collector added
		delete(m.staleCount, cluster)
	} else {
		m.staleCount[cluster] = n
	}
	m.stale.add(m.kind, cluster, d)
}

// forgetCluster drops what this Collector counted of a cluster that left the federation, and
// the cluster's member request series.
func (m *collectorMetrics) forgetCluster(cluster string) {
	m.mu.Lock()
	for key, cs := range m.staleIn {
		delete(cs, cluster)
		if len(cs) == 0 {
			delete(m.staleIn, key)
		}
	}
	m.stale.add(m.kind, cluster, -m.staleCount[cluster])
	delete(m.staleCount, cluster)
	m.mu.Unlock()
	m.members.ForgetCluster(cluster)
}

// forgetAll takes back everything this Collector counted as stale, when its Run returns: a
// Collector that stopped (a lost election, a shard given up) reports nothing.
func (m *collectorMetrics) forgetAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for cluster, n := range m.staleCount {
		m.stale.add(m.kind, cluster, -n)
	}
	clear(m.staleCount)
	clear(m.staleIn)
}

// staleMembers is the fedkit_status_stale_members family: per federated type and cluster,
// the sum of what every Collector registered into one registerer counts (one per shard, say),
// so that no Collector's count overwrites another's. A series exists while its sum is above
// zero. The first Collector's is registered; the others find it there.
type staleMembers struct {
	*prometheus.GaugeVec

	mu     sync.Mutex
	counts map[[2]string]int // type, cluster
}

func newStaleMembers() *staleMembers {
	return &staleMembers{
		GaugeVec: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fedkit_status_stale_members",
			Help: "Federated objects whose entry for a cluster is stale (no fresh data within the Collector's StaleAfter), by federated type and cluster. A cluster's series goes when no entry of it is stale.",
		}, []string{fedmetrics.LabelType, fedmetrics.LabelCluster}),
		counts: map[[2]string]int{},
	}
}

// add moves the count of kind's stale entries in cluster by d.
func (s *staleMembers) add(kind, cluster string, d int) {
	if d == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{kind, cluster}
	n := s.counts[k] + d
	if n <= 0 {
		delete(s.counts, k)
		s.DeleteLabelValues(kind, cluster)
		return
	}
	s.counts[k] = n
	s.WithLabelValues(kind, cluster).Set(float64(n))
}

// monitorMetrics are the ClusterMonitor's: the shared reconcile and member request families
// (probes are requests with verb "probe"), and fedkit_cluster_ready.
type monitorMetrics struct {
	reconciles *fedmetrics.Reconciles
	members    *fedmetrics.Members
	ready      *readyGauge
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
	return &monitorMetrics{reconciles: r, members: members, ready: &readyGauge{vec: ready, set: map[string]bool{}}}, nil
}

// forget drops a deleted cluster's series.
func (m *monitorMetrics) forget(cluster string) {
	m.members.ForgetCluster(cluster)
	m.ready.delete(cluster)
}

// readyGauge is fedkit_cluster_ready as one monitor sets it: it remembers the clusters whose
// series this monitor set, so that they go when its Run returns (the family is shared by the
// monitors of a registerer, one per shard, each setting its own clusters).
type readyGauge struct {
	vec *prometheus.GaugeVec

	mu  sync.Mutex
	set map[string]bool
}

// WithLabelValues returns cluster's gauge, remembering that this monitor set it.
func (g *readyGauge) WithLabelValues(cluster string) prometheus.Gauge {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.set[cluster] = true
	return g.vec.WithLabelValues(cluster)
}

// delete drops cluster's series.
func (g *readyGauge) delete(cluster string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.set, cluster)
	g.vec.DeleteLabelValues(cluster)
}

// forgetAll drops every series this monitor set, when its Run returns.
func (g *readyGauge) forgetAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for cluster := range g.set {
		g.vec.DeleteLabelValues(cluster)
	}
	clear(g.set)
}
