package status_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// TestSchedulerAndCollectorConverge: the scheduler reads status.clusters[].replicas of fresh
// entries as current replicas, the Collector writes them from what the members run, and the
// Syncer makes the members run the schedule. Together they settle, through a partition
// and its healing, and once settled nobody writes: no ping-pong between the schedule and the
// observed status.
func TestSchedulerAndCollectorConverge(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.fleet.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 20 * time.Second})
	s, err := scheduler.New(e.host, federation.DeploymentType, scheduler.Options{Clock: e.clock})
	require.NoError(t, err)
	push, err := fedsync.New(e.host, e.fleet, federation.DeploymentType, fedsync.Options{Clock: e.clock})
	require.NoError(t, err)
	require.NoError(t, e.host.Seed(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fedGVR.GroupVersion().String(), "kind": federation.DeploymentType.Federated.Kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "generation": int64(1)},
		"spec": map[string]any{
			"template": map[string]any{"spec": map[string]any{
				"replicas": int64(1),
				"selector": map[string]any{"matchLabels": map[string]any{"app": key.Name}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": key.Name}},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
				},
			}},
			"placement": map[string]any{"clusterSelector": map[string]any{}},
		},
	}}, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "ReplicaSchedulingPreference",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec": map[string]any{"targetKind": "FederatedDeployment", "totalReplicas": int64(9),
			"clusters": map[string]any{"a": map[string]any{"weight": int64(2)}, "*": map[string]any{"weight": int64(1)}}},
	}}))

	// round runs every loop once, then lets 10 seconds pass; it returns the host and member
	// writes of the round and the schedule.
	round := func() (int, string) {
		_, err := s.Reconcile(ctx, key)
		require.NoError(t, err)
		_, err = push.Reconcile(ctx, key)
		require.NoError(t, err)
		e.reconcile(t)
		writes := e.writes()
		for _, n := range e.fleet.Names() {
			m, _ := e.fleet.Member(n)
			for _, a := range m.Actions() {
				if a.Verb != fake.VerbGet && a.Verb != fake.VerbList {
					writes++
				}
			}
			m.ClearActions()
		}
		e.step(10 * time.Second)
		fed := e.get(t)
		var sched []string
		for _, c := range fed.Status.Schedule.Clusters {
			sched = append(sched, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
		}
		return writes, strings.Join(sched, ",")
	}
	// settle runs rounds until a minute passes without a write, and requires that to happen
	// within maxRounds; then it requires ten more minutes without any write.
	settle := func(phase string, maxRounds int) string {
		quiet, sched := 0, ""
		for i := 0; quiet < 6; i++ {
			require.Less(t, i, maxRounds, "%s: still writing after %d rounds", phase, maxRounds)
			var w int
			w, sched = round()
			t.Logf("%s round %d: %d writes, %s", phase, i, w, sched)
			if w == 0 {
				quiet++
			} else {
				quiet = 0
			}
		}
		for range 60 {
			w, again := round()
			t.Logf("%s settled: %d writes, %s", phase, w, again)
			require.Zero(t, w, "%s: a write after settling", phase)
			require.Equal(t, sched, again)
		}
		return sched
	}

	require.Equal(t, "a=5,b=2,c=2", settle("start", 20))
	fed := e.get(t)
	require.Equal(t, int64(9), fed.Status.Aggregated.ReadyReplicas)
	require.Equal(t, status.ReasonReady, readyOf(fed).Reason)

	// c is cut off; the monitor marks it not Ready: its replicas move to a and b.
	require.NoError(t, e.fleet.Partition("c"))
	e.setClusterReady(t, "c", false)
	sched := settle("partition", 20)
	require.NotContains(t, sched, "c=")
	fed = e.get(t)
	require.Equal(t, int64(9), fed.Status.Aggregated.ReadyReplicas, sched)

	// c heals: it is placed again; everything settles once more.
	require.NoError(t, e.fleet.Heal("c"))
	e.setClusterReady(t, "c", true)
	sched = settle("heal", 20)
	require.Contains(t, sched, "c=")
	fed = e.get(t)
	require.Equal(t, int64(9), fed.Status.Aggregated.ReadyReplicas, sched)
	require.Equal(t, status.ReasonReady, readyOf(fed).Reason)
}
