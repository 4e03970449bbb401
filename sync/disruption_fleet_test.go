package sync_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// noExecute lists the clusters with one of the monitor's taints at NoExecute.
func (e *fleetEnv) noExecute(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, n := range e.names {
		u, err := e.host.Peek(federation.ClusterGVR, "", n)
		require.NoError(t, err)
		c, err := federation.ClusterFromUnstructured(u)
		require.NoError(t, err)
		for _, taint := range c.Spec.Taints {
			if (taint.Key == federation.TaintClusterNotReady || taint.Key == federation.TaintClusterUnreachable) && taint.Effect == corev1.TaintEffectNoExecute {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// copies is each member's Deployment's spec.replicas (-1: none).
func (e *fleetEnv) copies(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, n := range e.names {
		m, _ := e.fleet.Member(n)
		u, err := m.Peek(deployments, webKey.Namespace, webKey.Name)
		if err != nil {
			out[n] = -1
			continue
		}
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		out[n] = r
	}
	return out
}

// TestFleetDisruptionMovesNothing: the control plane loses every member at once, as its own
// network outage would. For seven minutes, longer than the monitor's EvictionDelay, no Cluster gets
// a NoExecute taint and the schedule keeps every cluster's replicas. Contact then returns
// cluster by cluster, a minute apart: nothing moves while the others come back (the fleet
// is out of disruption once two of four are back, and the other two get a whole
// EvictionDelay from then), and no member ever loses its copy.
func TestFleetDisruptionMovesNothing(t *testing.T) {
	e := newFleetEnv(t, "stages: [{name: all, percentage: 100}]")
	want := map[string]int64{"a": 2, "b": 2, "c": 2, "d": 2}
	require.Equal(t, want, scheduledIn(e.fed(t)))
	check := func(when string) {
		t.Helper()
		require.Empty(t, e.noExecute(t), "%s, at %s: NoExecute taints", when, e.clock.Now().Sub(now))
		require.Equal(t, want, scheduledIn(e.fed(t)), "%s, at %s: the schedule moved", when, e.clock.Now().Sub(now))
		require.Empty(t, e.fed(t).Status.Schedule.Evictions, "%s: evictions", when)
		require.Equal(t, want, e.copies(t), "%s: the members' copies", when)
	}
	for _, n := range e.names {
		require.NoError(t, e.fleet.Partition(n))
	}
	for range 84 { // seven minutes
		e.round(t)
		check("every member cut off")
	}
	for _, n := range e.names {
		require.NoError(t, e.fleet.Heal(n))
		for range 12 { // a minute
			e.round(t)
			check(fmt.Sprintf("%s back", n))
		}
	}
	for range 24 {
		e.round(t)
		check("every member back")
	}
	require.True(t, ready(e.fed(t)))
}

// TestFleetDisruptionThenARealOutage: the control plane loses every member; contact returns
// to a and b, not to c. Nothing moves while the fleet is disrupted, nor for the
// EvictionDelay after it left the disruption (two of four back); then c, still cut off, is
// an outage of its own: its taint turns NoExecute and its replicas move to the others.
func TestFleetDisruptionThenARealOutage(t *testing.T) {
	e := newFleetEnv(t, "stages: [{name: all, percentage: 100}]")
	want := map[string]int64{"a": 2, "b": 2, "c": 2, "d": 2}
	for _, n := range e.names {
		require.NoError(t, e.fleet.Partition(n))
	}
	for range 84 {
		e.round(t)
	}
	require.Empty(t, e.noExecute(t))
	require.NoError(t, e.fleet.Heal("a"))
	require.NoError(t, e.fleet.Heal("b"))
	require.NoError(t, e.fleet.Heal("d"))
	healed := e.clock.Now()
	var left time.Time
	for i := range 200 {
		e.round(t)
		if len(e.noExecute(t)) > 0 {
			left = e.clock.Now()
			break
		}
		require.Equal(t, want, scheduledIn(e.fed(t)), "round %d: the schedule moved before c's own EvictionDelay", i)
	}
	require.Equal(t, []string{"c"}, e.noExecute(t))
	require.GreaterOrEqual(t, left.Sub(healed), 5*time.Minute, "c's NoExecute came before an EvictionDelay out of the disruption")
	e.until(t, "c's replicas moved", 40, func(f *federation.FederatedObject) bool {
		s := scheduledIn(f)
		return len(f.Status.Schedule.Evictions) == 1 && f.Status.Schedule.Evictions[0].Cluster == "c" && s["a"]+s["b"]+s["d"] == 8
	})
}
