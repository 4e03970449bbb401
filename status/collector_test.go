package status_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

func readyOf(fed *federation.FederatedObject) metav1.Condition {
	c := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionReady)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

func TestCollectorAggregates(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b", "c"}, []int64{3, 2, 1})
	e.writes()

	res := e.reconcile(t)
	require.Equal(t, federation.DefaultStatusPollInterval, res.RequeueAfter)
	require.Equal(t, 1, e.writes(), "one status write per pass")
	fed := e.get(t)
	require.Equal(t, &federation.AggregatedStatus{Replicas: 6, ReadyReplicas: 6, AvailableReplicas: 6, UpdatedReplicas: 6, Clusters: 3}, fed.Status.Aggregated)
	ready := readyOf(fed)
	require.Equal(t, metav1.ConditionTrue, ready.Status, ready.Message)
	want := federation.MemberStatus{Name: "b", Revision: 1, Replicas: i64(2), ReadyReplicas: i64(2), AvailableReplicas: i64(2),
		UpdatedReplicas: i64(2), ObservedGeneration: i64(1), Ready: ptr(true), ObservedRevision: 1, LastObserved: mtime(t0)}
	if diff := cmp.Diff(want, fed.Status.Clusters[1], sameTime); diff != "" {
		t.Errorf("status.clusters[1] (-want +got):\n%s", diff)
	}

	// A member scales: the next pass writes the new numbers.
	e.member(t, "c", 4)
	e.step(30 * time.Second)
	e.reconcile(t)
	require.Equal(t, 1, e.writes())
	fed = e.get(t)
	require.Equal(t, int64(9), fed.Status.Aggregated.ReadyReplicas)
	requireAt(t, t0.Add(30*time.Second), fed.Status.Clusters[2].LastObserved)
}

// TestCollectorZeroWrites: an hour of simulated time with nothing changing costs no status
// write at all: freshness is judged in memory, and timestamps alone never cause a write.
func TestCollectorZeroWrites(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b", "c"}, []int64{3, 2, 1})
	e.reconcile(t)
	before := e.get(t)
	e.writes()

	for range 120 { // an hour of 30s periods
		e.step(30 * time.Second)
		e.reconcile(t)
	}
	require.Zero(t, e.writes(), "status writes while nothing changed")
	if diff := cmp.Diff(before.Status, e.get(t).Status, sameTime); diff != "" {
		t.Errorf("status changed (-before +after):\n%s", diff)
	}
}

// TestCollectorPartitionThenHeal: the cluster monitor marks partitioned clusters not Ready;
// their entries go stale and out of the sum at once; with two of three gone there is no
// quorum and the last good aggregate stays; healing brings everything back.
func TestCollectorPartitionThenHeal(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b", "c"}, []int64{3, 3, 3})
	e.reconcile(t)

	partition := func(name string) {
		require.NoError(t, e.fleet.Partition(name))
		e.setClusterReady(t, name, false)
	}
	partition("c")
	e.member(t, "c", 7) // the partitioned cluster changes meanwhile: nobody can see it
	e.step(30 * time.Second)
	e.reconcile(t)
	fed := e.get(t)
	require.True(t, fed.Status.Clusters[2].Stale)
	require.Equal(t, int64(3), *fed.Status.Clusters[2].Replicas, "stale data stays visible as last known")
	requireAt(t, t0, fed.Status.Clusters[2].LastObserved)
	require.Equal(t, &federation.AggregatedStatus{Replicas: 6, ReadyReplicas: 6, AvailableReplicas: 6, UpdatedReplicas: 6, Clusters: 2, StaleClusters: 1}, fed.Status.Aggregated)
	require.Equal(t, status.ReasonStale, readyOf(fed).Reason)
	good := fed.Status.Aggregated // the last values built with a quorum

	partition("b")
	e.member(t, "a", 5) // the minority's numbers change: they must not be published
	e.step(30 * time.Second)
	e.reconcile(t)
	fed = e.get(t)
	kept := *good
	kept.StaleClusters = 2 // what Ready says too: fresh data from 1 of 3
	require.Equal(t, &kept, fed.Status.Aggregated, "no quorum: the last good sums stay, with the current stale count")
	require.Equal(t, metav1.ConditionUnknown, readyOf(fed).Status)
	require.Equal(t, status.ReasonNoQuorum, readyOf(fed).Reason)
	require.Equal(t, int64(5), *fed.Status.Clusters[0].Replicas, "the fresh entry still shows what it sees")

	for _, n := range []string{"b", "c"} {
		require.NoError(t, e.fleet.Heal(n))
		e.setClusterReady(t, n, true)
	}
	e.step(30 * time.Second)
	e.reconcile(t)
	fed = e.get(t)
	require.Equal(t, &federation.AggregatedStatus{Replicas: 15, ReadyReplicas: 15, AvailableReplicas: 15, UpdatedReplicas: 15, Clusters: 3}, fed.Status.Aggregated)
	require.Equal(t, metav1.ConditionTrue, readyOf(fed).Status)
	for _, c := range fed.Status.Clusters {
		require.False(t, c.Stale, c.Name)
	}
}

// TestCollectorFailedReadsAge: while the monitor has not noticed anything, failed reads
// never flip an entry: it stays fresh with its last values until StaleAfter has passed since
// the last successful read, then it goes stale.
func TestCollectorFailedReadsAge(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b", "c"}, []int64{3, 3, 3})
	e.reconcile(t)
	e.writes()
	require.NoError(t, e.fleet.Partition("b")) // the Cluster stays Ready: the monitor lags

	for i := 1; i <= 3; i++ { // 30s, 60s, 90s: StaleAfter is 90s
		e.step(30 * time.Second)
		e.reconcile(t)
		require.Zero(t, e.writes(), "pass %d after the last good read", i)
		require.False(t, e.get(t).Status.Clusters[1].Stale)
	}
	e.step(30 * time.Second)
	e.reconcile(t)
	require.Equal(t, 1, e.writes())
	fed := e.get(t)
	require.True(t, fed.Status.Clusters[1].Stale)
	require.Equal(t, int32(1), fed.Status.Aggregated.StaleClusters)

	// One successful read makes it fresh again.
	require.NoError(t, e.fleet.Heal("b"))
	e.step(time.Second)
	e.reconcile(t)
	require.False(t, e.get(t).Status.Clusters[1].Stale)
}

// TestCollectorRestart: a new Collector has no memory: one successful read is enough, and when
// nothing changed it writes nothing; a member it cannot read is stale at once.
func TestCollectorRestart(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b", "c"}, []int64{3, 3, 3})
	e.reconcile(t)
	e.writes()

	restart := func() {
		c, err := status.New(e.host, liveSet{e.fleet}, federation.DeploymentType, status.Options{Clock: e.clock})
		require.NoError(t, err)
		e.c = c
	}
	restart()
	e.step(time.Second)
	e.reconcile(t)
	require.Zero(t, e.writes())

	require.NoError(t, e.fleet.Partition("a"))
	restart()
	e.step(time.Second)
	e.reconcile(t)
	require.Equal(t, 1, e.writes())
	require.True(t, e.get(t).Status.Clusters[0].Stale)
}

// TestCollectorIdentity: a member object of another federation (another managed-by value) is
// not this one's: it is reported missing, and its replicas are not summed.
func TestCollectorIdentity(t *testing.T) {
	e := newEnv(t, status.Options{Identity: "fed-a"})
	e.federate(t, []string{"a", "b", "c"}, []int64{3, 2, 1})
	for _, c := range []string{"a", "b"} {
		m, _ := e.fleet.Member(c)
		require.NoError(t, m.Drift(depGVR, key.Namespace, key.Name, func(o *unstructured.Unstructured) {
			l := o.GetLabels()
			l[federation.ManagedByLabel] = "fed-a"
			o.SetLabels(l)
		}))
	}
	e.reconcile(t)
	fed := e.get(t)
	require.Equal(t, int64(5), fed.Status.Aggregated.Replicas, "c's object is another federation's")
	require.Nil(t, fed.Status.Clusters[2].Replicas)
}

// TestCollectorReportsReadinessAndRevision: each entry says whether its member object was
// ready and which revision annotation it carried, as last observed: what a staged rollout
// judges a stage by. A new revision that its controller has not caught up with yet is
// reported at once, not ready.
func TestCollectorReportsReadinessAndRevision(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b"}, []int64{2, 2})
	e.reconcile(t)
	entry := func() federation.MemberStatus { return e.get(t).Status.Clusters[1] }
	require.Equal(t, ptr(true), entry().Ready)
	require.Equal(t, int64(1), entry().ObservedRevision)

	// Sync pushes revision 2 to b; the Deployment controller has not seen it yet.
	m, _ := e.fleet.Member("b")
	require.NoError(t, m.Drift(depGVR, key.Namespace, key.Name, func(o *unstructured.Unstructured) {
		o.SetAnnotations(map[string]string{federation.RevisionAnnotation: "2"})
		_ = unstructured.SetNestedField(o.Object, int64(3), "spec", "replicas")
	}))
	e.writes()
	e.clock.Step(time.Second)
	e.reconcile(t)
	require.Equal(t, 1, e.writes())
	require.Equal(t, ptr(false), entry().Ready)
	require.Equal(t, int64(2), entry().ObservedRevision)

	// The controller catches up: ready again, one more write.
	e.step(time.Second)
	e.reconcile(t)
	require.Equal(t, 1, e.writes())
	require.Equal(t, ptr(true), entry().Ready)
	require.Equal(t, int64(2), entry().ObservedRevision)
	e.step(time.Second)
	e.reconcile(t)
	require.Zero(t, e.writes(), "nothing changed")
}

// TestCollectorCutOffClusterGoesStaleWhileItsClusterSaysReady: nothing rewrites the Cluster of
// a cut-off member (the monitor is disabled, or its shard is unclaimed), so its Ready
// condition stays True, and its member cache keeps serving its last state. The cache's own
// health says it lost contact: the entry goes stale after StaleAfter, and fresh again once the
// member is back.
func TestCollectorCutOffClusterGoesStaleWhileItsClusterSaysReady(t *testing.T) {
	e := newEnv(t, status.Options{})
	c, err := status.New(e.host, e.fleet, federation.DeploymentType, status.Options{Clock: e.clock})
	require.NoError(t, err)
	e.federate(t, []string{"a", "b", "c"}, []int64{1, 1, 1})
	pass := func() *federation.FederatedObject {
		t.Helper()
		_, err := c.Reconcile(ctx, key)
		require.NoError(t, err)
		return e.get(t)
	}
	fed := pass()
	require.False(t, fed.Status.Clusters[2].Stale)

	require.NoError(t, e.fleet.Partition("c"))
	e.step(30 * time.Second)
	fed = pass()
	require.False(t, fed.Status.Clusters[2].Stale, "within StaleAfter of the last contact: still fresh")

	e.step(90 * time.Second)
	fed = pass()
	cl, err := e.host.Peek(federation.ClusterGVR, "", "c")
	require.NoError(t, err)
	cluster, err := federation.ClusterFromUnstructured(cl)
	require.NoError(t, err)
	require.Equal(t, metav1.ConditionTrue, readyCondStatus(cluster.Status.Conditions), "the Cluster still says Ready")
	require.True(t, fed.Status.Clusters[2].Stale, "a cache cut off for more than StaleAfter serves stale data")
	ready := readyOf(fed)
	require.Equal(t, status.ReasonStale, ready.Reason, ready.Message)
	require.Equal(t, int32(1), fed.Status.Aggregated.StaleClusters)

	require.NoError(t, e.fleet.Heal("c"))
	e.step(30 * time.Second)
	fed = pass()
	require.False(t, fed.Status.Clusters[2].Stale, "back in contact: fresh again")
}

func readyCondStatus(conds []metav1.Condition) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == federation.ConditionReady {
			return c.Status
		}
	}
	return ""
}

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

	// c is cut off; the monitor marks it not Ready: its replicas move to a and b. c's copy
	// stays in the schedule: its eviction is held, as sync removes nothing from a cluster
	// that is not Ready. Its grace period (600 s) ends meanwhile, one write (from then on
	// the eviction has no deadline), so the partition settles after it.
	require.NoError(t, e.fleet.Partition("c"))
	e.setClusterReady(t, "c", false)
	for range 61 {
		round()
	}
	sched := settle("partition", 20)
	require.Equal(t, "a=6,b=3,c=2", sched)
	require.Nil(t, e.get(t).Status.Schedule.Evictions[0].Deadline, "the held eviction's deadline")
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
