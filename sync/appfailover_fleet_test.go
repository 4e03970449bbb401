package sync_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// withAppFailover turns on application failover (toleranceSeconds 60, backoffSeconds 300)
// and gives cluster the failing image web:broken by an override.
func withAppFailover(t *testing.T, cluster string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedMap(u.Object, map[string]any{
			"application": map[string]any{"toleranceSeconds": int64(60), "backoffSeconds": int64(300)},
		}, "spec", "placement", "failover"))
		require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
			"clusterName": cluster,
			"clusterOverrides": []any{map[string]any{
				"path": "/spec/template/spec/containers/0/image", "value": "web:broken",
			}},
		}}, "spec", "overrides"))
	}
}

func scheduledIn(f *federation.FederatedObject) map[string]int64 {
	out := map[string]int64{}
	if f.Status.Schedule != nil {
		for _, c := range f.Status.Schedule.Clusters {
			out[c.Name] = c.Replicas
		}
	}
	return out
}

func unhealthySince(f *federation.FederatedObject, cluster string) bool {
	for _, c := range f.Status.Clusters {
		if c.Name == cluster {
			return c.UnhealthySince != nil
		}
	}
	return false
}

// TestApplicationFailoverOnTheFleet: the whole control plane in memory. b runs a failing
// image (an override) while b itself stays Ready: the Collector records unhealthySince,
// and toleranceSeconds later the scheduler moves b's replicas to the others and avoids b
// until the back-off ends.
func TestApplicationFailoverOnTheFleet(t *testing.T) {
	e := newFleetEnv(t, "stages: [{name: all, percentage: 100}]")
	require.Equal(t, map[string]int64{"a": 2, "b": 2, "c": 2, "d": 2}, scheduledIn(e.fed(t)))
	e.editFed(t, withAppFailover(t, "b"))
	e.until(t, "b reported unhealthy", 20, func(f *federation.FederatedObject) bool { return unhealthySince(f, "b") })
	require.Equal(t, map[string]int64{"a": 2, "b": 2, "c": 2, "d": 2}, scheduledIn(e.fed(t)), "within toleranceSeconds")
	e.until(t, "b's replicas moved", 20, func(f *federation.FederatedObject) bool { _, ok := scheduledIn(f)["b"]; return !ok })
	f := e.fed(t)
	var total int64
	for _, n := range scheduledIn(f) {
		total += n
	}
	require.Equal(t, int64(8), total, "the others take b's replicas: %v", scheduledIn(f))
	require.Len(t, f.Status.Schedule.Avoided, 1)
	require.Equal(t, "b", f.Status.Schedule.Avoided[0].Cluster)
	require.Equal(t, federation.EvictionApplication, f.Status.Schedule.Avoided[0].Reason)
	until := f.Status.Schedule.Avoided[0].Until

	// The back-off: b stays out until it ends, then may be chosen again.
	e.until(t, "the back-off ended", 70, func(f *federation.FederatedObject) bool { return !e.clock.Now().Before(until.Time) })
	e.until(t, "b chosen again", 5, func(f *federation.FederatedObject) bool { _, ok := scheduledIn(f)["b"]; return ok })
}

// TestApplicationFailoverIgnoresStaleData: c runs the failing image, then is cut off before
// toleranceSeconds ends. Its last status is stale: no application failover. The cluster
// monitor's stages decide instead: c keeps its replicas while its taint is NoSchedule.
func TestApplicationFailoverIgnoresStaleData(t *testing.T) {
	e := newFleetEnv(t, "stages: [{name: all, percentage: 100}]")
	e.editFed(t, withAppFailover(t, "c"))
	e.until(t, "c reported unhealthy", 20, func(f *federation.FederatedObject) bool { return unhealthySince(f, "c") })
	require.NoError(t, e.fleet.Partition("c"))
	for range 24 { // two minutes: past toleranceSeconds, within EvictionDelay
		e.round(t)
	}
	f := e.fed(t)
	require.Empty(t, f.Status.Schedule.Avoided, "stale data never triggers application failover")
	require.False(t, unhealthySince(f, "c"), "the Collector clears unhealthySince on stale data")
	require.Contains(t, scheduledIn(f), "c", "not Ready, NoSchedule: c keeps what runs there")
}

// TestApplicationFailoverWaitsForAProgressingRollout: a new image rolls out slowly in b (its
// controller takes ten minutes, its Deployment reporting Progressing and Available all the
// while), far longer than toleranceSeconds (60s). A rollout progressing within its deadline
// with its availability held is healthy: b is never reported unhealthy, never avoided, and
// keeps its replicas.
func TestApplicationFailoverWaitsForAProgressingRollout(t *testing.T) {
	e := newFleetEnv(t, "stages: [{name: all, percentage: 100}]")
	e.editFed(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedMap(u.Object, map[string]any{
			"application": map[string]any{"toleranceSeconds": int64(60), "backoffSeconds": int64(300)},
		}, "spec", "placement", "failover"))
	})
	for range 4 {
		e.round(t)
	}
	b, _ := e.fleet.Member("b")
	b.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 10 * time.Minute})
	e.setImage(t, "web:v2")
	for i := range 96 { // eight minutes
		e.round(t)
		f := e.fed(t)
		require.False(t, unhealthySince(f, "b"), "round %d: b's progressing rollout reported unhealthy", i)
		require.Empty(t, f.Status.Schedule.Avoided, "round %d", i)
		require.Equal(t, map[string]int64{"a": 2, "b": 2, "c": 2, "d": 2}, scheduledIn(f), "round %d", i)
	}
}
