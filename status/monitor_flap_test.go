package status_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// setPartition cuts cluster off or heals it.
func (e *monitorEnv) setPartition(t testing.TB, cluster string, cut bool) {
	t.Helper()
	if cut {
		require.NoError(t, e.fleet.Partition(cluster))
	} else {
		require.NoError(t, e.fleet.Heal(cluster))
	}
}

// evictionEffect is the effect of the monitor's not-ready taint, "" without one.
func evictionEffect(c *federation.Cluster) corev1.TaintEffect {
	for _, t := range c.Spec.Taints {
		if t.Key == federation.TaintClusterNotReady {
			return t.Effect
		}
	}
	return ""
}

// TestMonitorUnreachableThreeQuartersOfTheTime: with the default thresholds, a member that
// is unreachable at three probes out of four, at random, for six hours of probes, changes
// Ready only a few times: the success threshold (3 in a row, doubled after each relapse)
// is hysteresis against lucky probes. It is evicted (NoExecute) all the same.
func TestMonitorUnreachableThreeQuartersOfTheTime(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			e := newMonitorEnv(t, status.MonitorOptions{Disruption: alone}, "eu")
			rng := rand.New(rand.NewPCG(seed, seed))
			changes, wasReady := 0, true
			for range 6 * 360 { // six hours of 10s probes
				e.setPartition(t, "eu", rng.Float64() < 0.75)
				e.probe(t, "eu")
				if ready := conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status == metav1.ConditionTrue; ready != wasReady {
					changes++
					wasReady = ready
				}
				e.clock.Step(status.DefaultProbePeriod)
			}
			t.Logf("Ready changed %d times", changes)
			require.LessOrEqual(t, changes, 5, "Ready flaps")
			require.GreaterOrEqual(t, changes, 1, "the member is mostly unreachable")
			if !wasReady {
				require.Equal(t, corev1.TaintEffectNoExecute, evictionEffect(e.cluster(t, "eu")))
			}
		})
	}
}

// TestMonitorEvictionCountsNotReadyTimeAcrossFlips: the eviction delay counts the time
// not Ready within the window, and does not start again when the cluster comes back for a
// moment: down 2m, up 40s, down 2m, up 40s, down again, and NoExecute comes once it has
// been down 5m in all, not 5m after the last flip.
func TestMonitorEvictionCountsNotReadyTimeAcrossFlips(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{Disruption: alone, FailureThreshold: 1, SuccessThreshold: 1}, "eu")
	var evictedAt time.Duration
	for i := range 40 {
		at := time.Duration(i) * 10 * time.Second
		e.setPartition(t, "eu", i < 12 || (i >= 16 && i < 28) || i >= 32)
		e.probe(t, "eu")
		c := e.cluster(t, "eu")
		if evictionEffect(c) == corev1.TaintEffectNoExecute && evictedAt == 0 {
			evictedAt = at
		}
		e.clock.Step(10 * time.Second)
	}
	// Not Ready for 0s-120s (the first success at 120s brings it back), 160s-290s (after
	// a relapse it takes two successes: 280s and 290s) and from 320s on: 120s + 130s leave
	// 50s to go after 320s.
	require.Equal(t, 370*time.Second, evictedAt, "NoExecute once not Ready for 5m in all")
}

// TestMonitorEvictionOnOwnClock: the eviction delay is measured on this monitor's clock
// from what it observed, never from the Ready condition's lastTransitionTime, which another
// replica (whose clock may be off) wrote. A Cluster that says it has been not Ready for an
// hour, or will be in an hour, is evicted 5m after this monitor first saw it not Ready.
func TestMonitorEvictionOnOwnClock(t *testing.T) {
	for _, tt := range []struct {
		name       string
		transition time.Duration
	}{{"written an hour ago", -time.Hour}, {"written by a clock an hour ahead", time.Hour}} {
		t.Run(tt.name, func(t *testing.T) {
			e := newMonitorEnv(t, status.MonitorOptions{Disruption: alone}, "eu")
			u, err := e.host.Get(ctx, federation.ClusterGVR, "", "eu")
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
				"key": federation.TaintClusterNotReady, "effect": "NoSchedule"}}, "spec", "taints"))
			u, err = e.host.Update(ctx, federation.ClusterGVR, u)
			require.NoError(t, err)
			cond, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&metav1.Condition{
				Type: federation.ConditionReady, Status: metav1.ConditionFalse, Reason: status.ReasonClusterNotReady,
				Message: "another replica", LastTransitionTime: metav1.NewTime(t0.Add(tt.transition))})
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{cond}, "status", "conditions"))
			_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
			require.NoError(t, err)
			require.NoError(t, e.fleet.Partition("eu"))

			for at := time.Duration(0); at < 5*time.Minute; at += 10 * time.Second {
				e.probe(t, "eu")
				require.Equal(t, corev1.TaintEffectNoSchedule, evictionEffect(e.cluster(t, "eu")), "at %s", at)
				e.clock.Step(10 * time.Second)
			}
			e.probe(t, "eu")
			require.Equal(t, corev1.TaintEffectNoExecute, evictionEffect(e.cluster(t, "eu")), "5m after this monitor first saw it not Ready")
		})
	}
}
