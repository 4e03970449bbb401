package status_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// TestMonitorFleetDisruption: the monitor loses every cluster at once (its own outage). However
// long it lasts, no taint turns NoExecute: each cluster's Failover condition says
// FleetDisrupted, and why. When two of the three come back, the third still counts as part
// of the disruption while they have been back less than the window (five minutes); after
// that it is an outage of its own, and, not Ready for longer than EvictionDelay, it turns
// NoExecute at once.
func TestMonitorFleetDisruption(t *testing.T) {
	names := []string{"a", "b", "c"}
	e := newMonitorEnv(t, status.MonitorOptions{Period: time.Minute, FailureThreshold: 1, SuccessThreshold: 1}, names...)
	round := func() {
		t.Helper()
		e.clock.Step(time.Minute)
		for _, n := range names {
			e.probe(t, n)
		}
	}
	effect := func(n string) corev1.TaintEffect {
		for _, taint := range e.cluster(t, n).Spec.Taints {
			if taint.Key == federation.TaintClusterNotReady {
				return taint.Effect
			}
		}
		return ""
	}
	round()
	for _, n := range names {
		require.NoError(t, e.fleet.Partition(n))
	}
	for range 20 {
		round()
		for _, n := range names {
			require.Equal(t, corev1.TaintEffectNoSchedule, effect(n), "%s at %s", n, e.clock.Now().Sub(t0))
		}
	}
	f := conditionOf(e.cluster(t, "c"), federation.ConditionFailover)
	require.Equal(t, status.ReasonFailoverFleetDisrupted, f.Reason)
	require.Equal(t, metav1.ConditionTrue, f.Status)
	require.Contains(t, f.Message, "while the fleet is disrupted (every cluster (3) lost), the control plane's own outage: taint federation.k8s.io/not-ready stays NoSchedule")

	require.NoError(t, e.fleet.Heal("a"))
	require.NoError(t, e.fleet.Heal("b"))
	round()
	require.Empty(t, e.cluster(t, "a").Spec.Taints)
	for range 4 { // a and b back for less than five minutes
		round()
		require.Equal(t, corev1.TaintEffectNoSchedule, effect("c"), "at %s", e.clock.Now().Sub(t0))
	}
	round()
	require.Equal(t, corev1.TaintEffectNoExecute, effect("c"), "c is an outage of its own once a and b have been back for five minutes")
	require.Equal(t, status.ReasonFailoverNoExecute, conditionOf(e.cluster(t, "c"), federation.ConditionFailover).Reason)
}
