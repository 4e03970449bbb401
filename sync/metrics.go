package sync

import (
	gosync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// metrics are per Syncer, registered into the embedder's registerer; a nil registerer leaves
// them unregistered (they still count, cheaply). A second Syncer on the same registerer shares
// the first one's collectors.
type metrics struct {
	reconciles *fedmetrics.Reconciles
	members    *fedmetrics.Members
	lag        prometheus.Observer
	// pending remembers, per federated object, when sync first saw a change (a generation it
	// had not recorded in status.observedGeneration) that has not reached every placed
	// cluster yet: the start of its propagation lag.
	mu      gosync.Mutex
	pending map[federation.Key]time.Time
}

// lagBuckets span a change that reaches every cluster in the pass that sees it (well under a
// second) to one that waits for an unreachable cluster to come back (an hour).
var lagBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

func newMetrics(reg prometheus.Registerer, kind string) (*metrics, error) {
	r, err := fedmetrics.NewReconciles(reg, fedmetrics.LoopSync, kind)
	if err != nil {
		return nil, err
	}
	m, err := fedmetrics.NewMembers(reg, fedmetrics.LoopSync)
	if err != nil {
		return nil, err
	}
	lag, err := fedmetrics.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "fedkit_propagation_lag_seconds",
		Help:    "Time from sync first seeing a change of a federated object (a new generation) to the pass that finds its revision in every placed cluster, by federated type. Measured by sync on its clock; member rollouts (pods becoming ready) are not included.",
		Buckets: lagBuckets,
	}, []string{fedmetrics.LabelType}))
	if err != nil {
		return nil, err
	}
	return &metrics{reconciles: r, members: m, lag: lag.WithLabelValues(kind), pending: map[federation.Key]time.Time{}}, nil
}

func (m *metrics) observe(outcome string, err error, start, end time.Time) {
	m.reconciles.Observe(outcome, err, start, end)
}

// memberClient returns the client of a member cluster, counting every request sync makes
// through it (fedkit_member_requests_total).
func (s *Syncer) memberClient(cluster string) (federation.ClusterClient, error) {
	c, err := s.clusters.Client(cluster)
	if err != nil {
		return nil, err
	}
	return s.metrics.members.Client(cluster, c), nil
}

// changed starts the propagation lag of key at now when fed has a generation sync has not
// recorded yet and no earlier change is still on its way: the lag of overlapping changes is
// measured from the oldest, as the fleet lags the spec since then.
func (m *metrics) changed(key federation.Key, fed *federation.FederatedObject, now time.Time) {
	if fed.Generation <= fed.Status.ObservedGeneration {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.pending[key]; !ok {
		m.pending[key] = now
	}
}

// propagated ends key's propagation lag at now, when one is running: every placed cluster
// runs the current revision. With no cluster placed there is nothing to measure, and the
// start is dropped.
func (m *metrics) propagated(key federation.Key, placed int, now time.Time) {
	m.mu.Lock()
	since, ok := m.pending[key]
	delete(m.pending, key)
	m.mu.Unlock()
	if ok && placed > 0 {
		m.lag.Observe(now.Sub(since).Seconds())
	}
}

// forget drops key's pending lag: the object is gone or being deleted.
func (m *metrics) forget(key federation.Key) {
	m.mu.Lock()
	delete(m.pending, key)
	m.mu.Unlock()
}
