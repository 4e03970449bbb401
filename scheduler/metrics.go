package scheduler

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// metrics are per Scheduler, registered into the embedder's registerer; a nil registerer
// leaves them unregistered (they still count, cheaply). A second Scheduler on the same
// registerer shares the first one's collectors.
type metrics struct {
	reconciles *fedmetrics.Reconciles
	// changes counts writes of a new status.schedule, for the scheduler's type.
	changes prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, kind string) (*metrics, error) {
	r, err := fedmetrics.NewReconciles(reg, fedmetrics.LoopScheduler, kind)
	if err != nil {
		return nil, err
	}
	changes, err := fedmetrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fedkit_scheduler_schedule_changes_total",
		Help: "Writes of a changed status.schedule (clusters or replicas), by federated type.",
	}, []string{fedmetrics.LabelType}))
	if err != nil {
		return nil, err
	}
	return &metrics{reconciles: r, changes: changes.WithLabelValues(kind)}, nil
}

func (m *metrics) observe(outcome string, err error, start, end time.Time) {
	m.reconciles.Observe(outcome, err, start, end)
}
