package status_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// TestMonitorStampsNoExecuteTaints: a NoExecute taint written without timeAdded (by a user, a
// tool) gets one the first time the monitor sees it, as Karmada's API does, so a toleration's
// tolerationSeconds counts from then and ends; the stamp stays on later passes. The monitor's
// other taint rules are untouched: the user's taint keeps its place, a NoSchedule taint gets
// no stamp.
func TestMonitorStampsNoExecuteTaints(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	e.probe(t, "eu")
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"},
		map[string]any{"key": "gpu", "effect": "NoSchedule"},
	}, "spec", "taints"))
	_, err = e.host.Update(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)

	e.clock.Step(10 * time.Second)
	_, writes := e.probe(t, "eu")
	require.Equal(t, []string{"taints"}, writes)
	stamped := metav1.NewTime(t0.Add(10 * time.Second))
	want := []corev1.Taint{
		{Key: "drain", Value: "true", Effect: corev1.TaintEffectNoExecute, TimeAdded: &stamped},
		{Key: "gpu", Effect: corev1.TaintEffectNoSchedule},
	}
	require.Equal(t, want, inUTC(e.cluster(t, "eu").Spec.Taints))

	e.clock.Step(time.Minute)
	_, writes = e.probe(t, "eu")
	require.NotContains(t, writes, "taints", "stamped once")
	require.Equal(t, want, inUTC(e.cluster(t, "eu").Spec.Taints))
}

// inUTC returns taints with their timeAdded in UTC, as the test's times are.
func inUTC(taints []corev1.Taint) []corev1.Taint {
	for i := range taints {
		if at := taints[i].TimeAdded; at != nil {
			utc := metav1.NewTime(at.UTC())
			taints[i].TimeAdded = &utc
		}
	}
	return taints
}

// TestMonitorDisruptionTakesBackNoExecuteOfItsOnset: a cluster not Ready for long within the
// readiness window (its own outage, minutes ago) turns NoExecute at the first failed probe
// of the control plane's own outage: at its pass the others still look Ready, and the fleet
// is not disrupted yet. Once the monitor has lost the others too, the fleet is disrupted, and
// the NoExecute taint it added since the disruption began goes back to NoSchedule (as the
// node lifecycle controller takes its NoExecute taints back in a full disruption). A
// NoExecute taint from before the disruption began stays. (The soak, seed 1, Run mode: c-00,
// partitioned and healed minutes before, was evicted by the control plane's outage.)
func TestMonitorDisruptionTakesBackNoExecuteOfItsOnset(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	e := newMonitorEnv(t, status.MonitorOptions{Period: time.Minute, FailureThreshold: 1, SuccessThreshold: 1}, names...)
	effect := func(n string) corev1.TaintEffect {
		for _, taint := range e.cluster(t, n).Spec.Taints {
			if taint.Key == federation.TaintClusterNotReady {
				return taint.Effect
			}
		}
		return ""
	}
	round := func(names ...string) {
		t.Helper()
		for _, n := range names {
			e.probe(t, n)
		}
		e.clock.Step(time.Minute)
	}
	round(names...)
	// a flaps: down six minutes, back.
	require.NoError(t, e.fleet.Partition("a"))
	for range 6 {
		round(names...)
	}
	require.NoError(t, e.fleet.Heal("a"))
	round(names...)
	require.Empty(t, e.cluster(t, "a").Spec.Taints, "a is back")
	// d's own outage, long enough to be evicted.
	require.NoError(t, e.fleet.Partition("d"))
	for range 6 {
		round(names...)
	}
	require.Equal(t, corev1.TaintEffectNoExecute, effect("d"))
	// The control plane loses every cluster; a is probed first.
	for _, n := range names {
		require.NoError(t, e.fleet.Partition(n))
	}
	round("a")
	require.Equal(t, corev1.TaintEffectNoExecute, effect("a"), "alone, a is an outage of its own: its time not Ready within the window is over EvictionDelay")
	round(names...) // b and c lost after a's pass: the fleet is disrupted
	round(names...)
	require.Equal(t, corev1.TaintEffectNoSchedule, effect("a"), "the fleet is disrupted since a was lost: a's NoExecute goes back")
	require.Equal(t, corev1.TaintEffectNoSchedule, effect("b"))
	require.Equal(t, corev1.TaintEffectNoExecute, effect("d"), "d turned NoExecute before the disruption began")
	require.Equal(t, status.ReasonFailoverFleetDisrupted, conditionOf(e.cluster(t, "a"), federation.ConditionFailover).Reason)
}
