package status_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/status"
)

// seedObject creates the FederatedDeployment default/<name> and its member Deployments in
// clusters, as sync would have written them (generation 1 propagated at revision 1).
func (e *env) seedObject(t testing.TB, name string, clusters []string) federation.Key {
	t.Helper()
	entries := make([]any, 0, len(clusters))
	for _, c := range clusters {
		entries = append(entries, map[string]any{"name": c, "revision": int64(1)})
		m, _ := e.fleet.Member(c)
		_, err := m.Peek(depGVR, key.Namespace, name)
		require.True(t, apierrors.IsNotFound(err))
		require.NoError(t, m.Seed(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": key.Namespace, "labels": map[string]any{
				federation.ManagedByLabel: federation.ManagedByValue, federation.FederatedNameLabel: name,
				federation.FederatedNamespaceLabel: key.Namespace},
				"annotations": map[string]any{federation.RevisionAnnotation: "1"}},
			"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}},
		}}))
	}
	e.fleet.Tick()
	require.NoError(t, e.host.Seed(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fedGVR.GroupVersion().String(), "kind": federation.DeploymentType.Federated.Kind,
		"metadata": map[string]any{"name": name, "namespace": key.Namespace, "generation": int64(1)},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"replicas": int64(1)}}},
		"status": map[string]any{"clusters": entries, "observedGeneration": int64(1), "syncedRevision": int64(1),
			"conditions": []any{map[string]any{"type": federation.ConditionPropagated, "status": "True", "reason": "Propagated",
				"message": "revision 1 runs everywhere", "observedGeneration": int64(1), "lastTransitionTime": "2026-11-30T12:00:00Z"}}},
	}}))
	return federation.Key{Namespace: key.Namespace, Name: name}
}

// ownedBy returns the first of web-0, web-1, ... that shard owns.
func ownedBy(t testing.TB, shard federation.Shard) string {
	t.Helper()
	for i := range 100 {
		name := fmt.Sprintf("web-%d", i)
		if shard.Owns(federation.Key{Namespace: key.Namespace, Name: name}) {
			return name
		}
	}
	t.Fatalf("no name owned by %v", shard)
	return ""
}

// TestStaleMembersAcrossShards: with one Collector per shard of one type on one registerer,
// fedkit_status_stale_members counts every shard's stale entries, not the last writer's.
func TestStaleMembersAcrossShards(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := newEnv(t, status.Options{})
	shards := []federation.Shard{{Index: 0, Count: 2}, {Index: 1, Count: 2}}
	var collectors []*status.Collector
	var keys []federation.Key
	for _, sh := range shards {
		c, err := status.New(e.host, liveSet{e.fleet}, federation.DeploymentType, status.Options{Clock: e.clock, Registerer: reg, Shard: sh})
		require.NoError(t, err)
		collectors = append(collectors, c)
		keys = append(keys, e.seedObject(t, ownedBy(t, sh), []string{"a", "b", "c"}))
	}
	e.setClusterReady(t, "c", false)
	for i, c := range collectors {
		_, err := c.Reconcile(ctx, keys[i])
		require.NoError(t, err)
	}
	require.Equal(t, 2.0, value(t, reg, "fedkit_status_stale_members", map[string]string{"cluster": "c", "type": "FederatedDeployment"}),
		"two objects, one per shard, are stale in c")

	// One shard's object turns fresh: the other's stays counted.
	e.setClusterReady(t, "c", true)
	_, err := collectors[0].Reconcile(ctx, keys[0])
	require.NoError(t, err)
	require.Equal(t, 1.0, value(t, reg, "fedkit_status_stale_members", map[string]string{"cluster": "c", "type": "FederatedDeployment"}))
	_, err = collectors[1].Reconcile(ctx, keys[1])
	require.NoError(t, err)
	require.Zero(t, testutil.CollectAndCount(reg, "fedkit_status_stale_members"), "no entry is stale: no series")
}

// TestRunDeletesItsGauges: a loop's gauges go when its Run returns (a lost election, a shard
// given up), so no stale series is left behind; another Collector's contribution stays.
func TestRunDeletesItsGauges(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := newEnv(t, status.Options{})
	shards := []federation.Shard{{Index: 0, Count: 2}, {Index: 1, Count: 2}}
	running, err := status.New(e.host, e.fleet, federation.DeploymentType, status.Options{Clock: e.clock, Registerer: reg, Shard: shards[0]})
	require.NoError(t, err)
	other, err := status.New(e.host, liveSet{e.fleet}, federation.DeploymentType, status.Options{Clock: e.clock, Registerer: reg, Shard: shards[1]})
	require.NoError(t, err)
	mine := e.seedObject(t, ownedBy(t, shards[0]), []string{"a", "b", "c"})
	theirs := e.seedObject(t, ownedBy(t, shards[1]), []string{"a", "b", "c"})
	e.setClusterReady(t, "c", false)
	_, err = other.Reconcile(ctx, theirs)
	require.NoError(t, err)

	stale := func() float64 {
		if testutil.CollectAndCount(reg, "fedkit_status_stale_members") == 0 {
			return 0
		}
		return value(t, reg, "fedkit_status_stale_members", map[string]string{"cluster": "c"})
	}
	stop := run(t, running.Run)
	fedtest.Eventually(t, "the running Collector's stale entry", func() bool {
		u, err := e.host.Peek(fedGVR, mine.Namespace, mine.Name)
		require.NoError(t, err)
		list, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
		return len(list) == 3 && list[2].(map[string]any)["stale"] == true && stale() == 2
	})
	stop()
	require.Equal(t, 1.0, stale(), "the stopped Collector's contribution is gone, the other's stays")

	// The monitor's readiness gauge too.
	m := newMonitorEnv(t, status.MonitorOptions{Registerer: reg}, "eu", "us")
	stop = run(t, m.m.Run)
	stepUntil(t, m.clock.Step, 10*time.Second, "fedkit_cluster_ready of both clusters", func() bool {
		return testutil.CollectAndCount(reg, "fedkit_cluster_ready") == 2
	})
	stop()
	require.Zero(t, testutil.CollectAndCount(reg, "fedkit_cluster_ready"), "a stopped monitor leaves no readiness series")
}
