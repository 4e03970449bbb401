package sync

import (
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
	// lag observes the propagation lag, from the time the object's record holds (see
	// record.lagSince).
	lag prometheus.Observer
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
	return &metrics{reconciles: r, members: m, lag: lag.WithLabelValues(kind)}, nil
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

// propagated ends key's propagation lag, when one is running: every placed cluster runs the
// current revision. With no cluster placed there is nothing to measure, and the start is
// dropped.
func (s *Syncer) propagated(key federation.Key, placed int) {
	if since, ok := s.lagEnds(key); ok && placed > 0 {
		s.metrics.lag.Observe(s.opts.Clock.Since(since).Seconds())
	}
}
