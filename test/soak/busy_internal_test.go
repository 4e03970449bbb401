package soak

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestBusySumsQueuesAndWorkersOnly: Busy sums workqueue_depth and
// controller_runtime_active_workers over every loop set, from the busy registry alone; the
// set's registry still holds every family.
func TestBusySumsQueuesAndWorkersOnly(t *testing.T) {
	l := &loops{}
	for range 2 {
		set := &loopSet{metrics: newBusyRegistry()}
		depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth"}, []string{"name"})
		active := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_active_workers"}, []string{"controller"})
		other := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_max_concurrent_reconciles"}, []string{"controller"})
		set.metrics.MustRegister(depth, active)
		if err := set.metrics.Register(other); err != nil {
			t.Fatal(err)
		}
		depth.WithLabelValues("sync").Set(2)
		active.WithLabelValues("scheduler").Set(1)
		other.WithLabelValues("scheduler").Set(40)
		l.sets = append(l.sets, set)
	}
	n, err := l.Busy()
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("Busy = %d, want 6 (2 queued and 1 running in each of two sets)", n)
	}
	all, err := l.sets[0].metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Errorf("the set's registry holds %d families, want 3", len(all))
	}
}
