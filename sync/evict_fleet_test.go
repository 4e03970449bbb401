package sync_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// failoverFleet is the scheduler, sync and the status collector over three members whose
// simulated controllers make a Deployment's new replicas available 30s after they see them,
// all on one fake clock, driven pass by pass.
type failoverFleet struct {
	f     *fedtest.Env
	sched *scheduler.Scheduler
	sync  *fedsync.Syncer
	coll  *status.Collector
}

const failoverObject = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    metadata: {labels: {app: frontend}}
    spec:
      replicas: 6
      selector: {matchLabels: {app: frontend}}
      template:
        metadata: {labels: {app: frontend}}
        spec: {containers: [{name: nginx, image: "nginx:1.21"}]}
  placement:
    clusters: [{name: aws}, {name: gcp}, {name: azure}]
`

// newFailoverFleet is the fleet with the object and, unless rsp is "", its preference (rsp is
// its spec).
func newFailoverFleet(t *testing.T, rsp string, capacity int) *failoverFleet {
	t.Helper()
	f := fedtest.New(t, fedtest.Options{Now: now, Namespaces: []string{"production"},
		Workloads: fake.Workloads{Apps: true, ReadyAfter: 30 * time.Second, PodCapacity: capacity},
		Members:   []fedtest.Member{{Name: "aws"}, {Name: "gcp"}, {Name: "azure"}}})
	x := &failoverFleet{f: f}
	var err error
	x.sched, err = scheduler.New(f.Host, federation.DeploymentType, scheduler.Options{Clock: f.Clock})
	require.NoError(t, err)
	x.sync, err = fedsync.New(f.Host, f.Fleet, federation.DeploymentType, fedsync.Options{Clock: f.Clock})
	require.NoError(t, err)
	x.coll, err = status.New(f.Host, f.Fleet, federation.DeploymentType, status.Options{Clock: f.Clock})
	require.NoError(t, err)
	fedtest.Apply(t, f.Host, federation.DeploymentType.FederatedGVR(), failoverObject)
	if rsp != "" {
		fedtest.Apply(t, f.Host, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: `+rsp)
	}
	return x
}

// place applies the object again with spec.placement.clusters naming clusters.
func (x *failoverFleet) place(t *testing.T, clusters ...string) {
	t.Helper()
	var refs []string
	for _, c := range clusters {
		refs = append(refs, "{name: "+c+"}")
	}
	fedtest.Apply(t, x.f.Host, federation.DeploymentType.FederatedGVR(), strings.Replace(failoverObject,
		"clusters: [{name: aws}, {name: gcp}, {name: azure}]", "clusters: ["+strings.Join(refs, ", ")+"]", 1))
}

// step is one round: every loop passes once, the members' controllers run, the clock moves.
func (x *failoverFleet) step(t *testing.T) {
	t.Helper()
	_, err := x.sched.Reconcile(ctx, key)
	require.NoError(t, err)
	_, _ = x.sync.Reconcile(ctx, key)
	x.f.Fleet.Tick()
	_, err = x.coll.Reconcile(ctx, key)
	require.NoError(t, err)
	x.f.Clock.Step(10 * time.Second)
}

// available is each member's Deployment's availableReplicas (-1: no Deployment).
func (x *failoverFleet) available(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, c := range []string{"aws", "gcp", "azure"} {
		u, err := x.f.Member(t, c).Get(ctx, federation.DeploymentType.TargetGVR(), key.Namespace, key.Name)
		if err != nil {
			out[c] = -1
			continue
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
		out[c] = n
	}
	return out
}

// stepUntilGone steps until cluster has no Deployment, at most max steps, and returns what
// was available after each step.
func (x *failoverFleet) stepUntilGone(t *testing.T, cluster string, max int) []string {
	t.Helper()
	var trace []string
	for range max {
		x.step(t)
		a := x.available(t)
		trace = append(trace, fmt.Sprint(a))
		if a[cluster] == -1 {
			break
		}
	}
	return trace
}

func (x *failoverFleet) fed(t *testing.T) *federation.FederatedObject {
	t.Helper()
	u, err := x.f.Host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	fed, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return fed
}

func (x *failoverFleet) taint(t *testing.T, cluster string, taints []any) {
	t.Helper()
	cl, err := x.f.Host.Get(ctx, federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(cl.Object, taints, "spec", "taints"))
	_, err = x.f.Host.Update(ctx, federation.ClusterGVR, cl)
	require.NoError(t, err)
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += max(v, 0)
	}
	return n
}

var drainTaint = []any{map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"}}

// TestFailoverNeverDropsCapacity: azure is drained with a NoExecute taint the placement does
// not tolerate. Its replicas move to aws and gcp, and its copy is removed only once they are
// available there: sampled after every step, the fleet never has fewer than 6 available.
func TestFailoverNeverDropsCapacity(t *testing.T) {
	x := newFailoverFleet(t, `{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}`, 0)
	for range 10 {
		x.step(t)
	}
	require.Equal(t, map[string]int64{"aws": 2, "gcp": 2, "azure": 2}, x.available(t), "steady before the drain")

	x.taint(t, "azure", drainTaint)
	var trace []string
	for i := range 30 {
		x.step(t)
		a := x.available(t)
		trace = append(trace, fmt.Sprint(a))
		require.GreaterOrEqual(t, sum(a), int64(6), "step %d: capacity dropped: %v", i, trace)
		if a["azure"] == -1 {
			require.Equal(t, int64(3), a["aws"], "azure's copy went before its replacements were available: %v", trace)
			require.Equal(t, int64(3), a["gcp"], "azure's copy went before its replacements were available: %v", trace)
			break
		}
	}
	require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": -1}, x.available(t), "%v", trace)
	x.step(t)
	s := x.fed(t).Status.Schedule
	require.Empty(t, s.Evictions, "nothing left of the eviction")
	require.Greater(t, len(trace), 3, "the replacements took their 30s: azure kept its copy meanwhile: %v", trace)
}

// TestFailoverNoRoomEvictsNothing: aws and gcp hold only their own 2 replicas (status.available
// says there is no room): azure keeps its replicas and the Scheduled condition says why.
func TestFailoverNoRoomEvictsNothing(t *testing.T) {
	x := newFailoverFleet(t, `{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}, aws: {weight: 1, maxReplicas: 2}, gcp: {weight: 1, maxReplicas: 2}}}`, 0)
	for range 10 {
		x.step(t)
	}
	x.taint(t, "azure", drainTaint)
	for range 10 {
		x.step(t)
		require.Equal(t, map[string]int64{"aws": 2, "gcp": 2, "azure": 2}, x.available(t))
	}
	fed := x.fed(t)
	require.Empty(t, fed.Status.Schedule.Evictions)
	var msg string
	for _, c := range fed.Status.Conditions {
		if c.Type == federation.ConditionScheduled {
			msg = c.Message
			require.Equal(t, scheduler.ReasonUnschedulable, c.Reason, msg)
		}
	}
	require.Contains(t, msg, "not evicted, as they fit nowhere else: azure keeps 2 replica(s) (aws: has 2, capped by maxReplicas 2; gcp: has 2, capped by maxReplicas 2)")
}

// TestFailoverPartitionDuringEviction: gcp is cut off while azure's replicas move, once sync has
// given it its 3 and before they are available. Its data goes stale and never counts as a
// ready replacement: azure keeps its copy until gcp is back and reports its 3 available.
func TestFailoverPartitionDuringEviction(t *testing.T) {
	x := newFailoverFleet(t, `{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}`, 0)
	for range 10 {
		x.step(t)
	}
	x.taint(t, "azure", drainTaint)
	x.step(t)
	require.NoError(t, x.f.Fleet.Partition("gcp"))
	for i := range 20 {
		x.step(t)
		require.Equal(t, int64(2), x.available(t)["azure"], "step %d: azure's copy went while gcp's replacement cannot be seen", i)
	}
	require.Len(t, x.fed(t).Status.Schedule.Evictions, 1)
	require.NoError(t, x.f.Fleet.Heal("gcp"))
	trace := x.stepUntilGone(t, "azure", 30)
	require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": -1}, x.available(t), "%v", trace)
}

// TestFailoverNoReplacementIntoAClusterCutOff: gcp is cut off as azure is drained, before sync
// could give it its share of azure's replicas. While sync cannot write there gcp takes no
// replacement: aws takes them all, and azure's copy goes once aws reports them available. The
// fleet never runs fewer than 6 available (gcp's 2 run on, unseen).
func TestFailoverNoReplacementIntoAClusterCutOff(t *testing.T) {
	x := newFailoverFleet(t, `{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}`, 0)
	for range 10 {
		x.step(t)
	}
	x.taint(t, "azure", drainTaint)
	require.NoError(t, x.f.Fleet.Partition("gcp"))
	var trace []string
	for i := range 20 {
		x.step(t)
		a := x.available(t)
		gcp, err := x.f.Member(t, "gcp").Peek(federation.DeploymentType.TargetGVR(), key.Namespace, key.Name)
		require.NoError(t, err)
		unseen, _, _ := unstructured.NestedInt64(gcp.Object, "status", "availableReplicas")
		trace = append(trace, fmt.Sprint(a, " gcp:", unseen))
		require.GreaterOrEqual(t, max(a["aws"], 0)+max(a["azure"], 0)+unseen, int64(6), "step %d: %v", i, trace)
		if a["azure"] == -1 {
			require.Equal(t, int64(4), a["aws"], "azure's copy went before aws had its replicas: %v", trace)
		}
	}
	require.Equal(t, int64(-1), x.available(t)["azure"], "%v", trace)
	require.Empty(t, x.fed(t).Status.Schedule.Evictions)
}

// TestFailoverEvictedClusterBackAfterItsReplacementWent: azure is drained and cut off at once,
// so sync cannot remove its copy. aws and gcp bring their 3 up: the eviction would end, but
// it is held while azure is out of reach (before azure's data goes stale it may end and
// begin again, as sync's failed delete shows the copy is still there). Then gcp is cut off
// too. When azure is back, its copy is not deleted on the strength of a check made while it
// was away: gcp's replicas cannot be seen, so azure keeps its 2 until gcp is back and
// reports them. (The chaos soak,
// seed 8: an eviction that ended while its cluster was cut off deleted the copy when the
// cluster came back, after a replacement cluster had been removed.)
func TestFailoverEvictedClusterBackAfterItsReplacementWent(t *testing.T) {
	x := newFailoverFleet(t, `{targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}`, 0)
	for range 10 {
		x.step(t)
	}
	x.taint(t, "azure", drainTaint)
	require.NoError(t, x.f.Fleet.Partition("azure"))
	var trace []string
	for range 20 { // past the collector's StaleAfter (90s): azure's data is stale
		x.step(t)
		trace = append(trace, fmt.Sprint(x.available(t)))
	}
	a := x.available(t)
	require.Equal(t, int64(3), a["aws"], "%v", trace)
	require.Equal(t, int64(3), a["gcp"], "%v", trace)
	ev := x.fed(t).Status.Schedule.Evictions
	require.Len(t, ev, 1, "azure's eviction is held while azure is out of reach")
	require.Contains(t, ev[0].Message, "the copy stays until azure is back")

	require.NoError(t, x.f.Fleet.Partition("gcp"))
	for range 12 { // gcp's data goes stale too
		x.step(t)
	}
	require.NoError(t, x.f.Fleet.Heal("azure"))
	for i := range 20 {
		x.step(t)
		a := x.available(t)
		trace = append(trace, fmt.Sprint(a))
		require.Equal(t, int64(2), a["azure"], "step %d: azure's copy went while its replacement in gcp cannot be seen: %v", i, trace)
	}
	require.NoError(t, x.f.Fleet.Heal("gcp"))
	trace = append(trace, x.stepUntilGone(t, "azure", 10)...)
	require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": -1}, x.available(t), "%v", trace)
	x.step(t)
	require.Empty(t, x.fed(t).Status.Schedule.Evictions, "nothing left of the eviction")
}

// TestFailoverRecovery: once azure's taint is removed, it gets replicas back only by the
// preference's rebalance rules: with rebalance off at the next refill (the rebalance
// period), with rebalance on at once; either way gracefully, never below 6 available, and
// with nothing of the evictions left afterwards.
func TestFailoverRecovery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rebalance bool
	}{{"rebalance off", false}, {"rebalance on", true}} {
		t.Run(tc.name, func(t *testing.T) {
			x := newFailoverFleet(t, fmt.Sprintf(`{targetKind: FederatedDeployment, totalReplicas: 6, rebalance: %t, rebalancePeriod: 5m, intersectWithClusterSelector: true, clusters: {"*": {weight: 1, minReplicas: 0}}}`, tc.rebalance), 0)
			for range 10 {
				x.step(t)
			}
			x.taint(t, "azure", drainTaint)
			trace := x.stepUntilGone(t, "azure", 30)
			require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": -1}, x.available(t), "%v", trace)
			x.taint(t, "azure", nil)
			x.step(t)
			x.step(t)
			if !tc.rebalance {
				a := x.available(t)
				require.LessOrEqual(t, a["azure"], int64(0), "rebalance off: nothing moves before the refill: %v", a)
				require.Equal(t, int64(3), a["aws"], "rebalance off: nothing moves before the refill: %v", a)
			}
			trace = nil
			for i := range 60 {
				x.step(t)
				a := x.available(t)
				trace = append(trace, fmt.Sprint(a))
				require.GreaterOrEqual(t, sum(a), int64(6), "step %d: capacity dropped: %v", i, trace)
				if a["aws"] == 2 && a["gcp"] == 2 && a["azure"] == 2 {
					break
				}
			}
			require.Equal(t, map[string]int64{"aws": 2, "gcp": 2, "azure": 2}, x.available(t), "%v", trace)
			for range 3 {
				x.step(t)
			}
			require.Empty(t, x.fed(t).Status.Schedule.Evictions)
		})
	}
}

// When a graceful eviction with purge mode Never ends, the scheduler drops the cluster from
// the schedule and marks the eviction Release: sync then releases the copy there (it stays,
// without fedkit's marks) instead of deleting it, and once status.clusters no longer lists
// the cluster the scheduler drops the eviction. With Graciously the copy is deleted then.
func TestEvictionEndReleasesOrDeletes(t *testing.T) {
	for _, tc := range []struct {
		mode    federation.PurgeMode
		release bool
	}{{federation.PurgeNever, true}, {federation.PurgeGraciously, false}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			sched, err := scheduler.New(e.host, e.typ, scheduler.Options{Clock: e.clock})
			require.NoError(t, err)
			pass := func() {
				t.Helper()
				_, err := sched.Reconcile(ctx, key)
				require.NoError(t, err)
				_, err = e.s.Reconcile(ctx, key)
				require.NoError(t, err)
			}
			e.apply(t, e.typ.FederatedGVR(), frontend)
			e.edit(t, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, string(tc.mode), "spec", "placement", "failover", "purgeMode")
			})
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 6, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}
`)
			pass()
			require.NotNil(t, e.member(t, "azure"))

			// azure is drained: its 2 replicas move to aws and gcp, and it keeps them meanwhile.
			cl, err := e.host.Get(ctx, federation.ClusterGVR, "", "azure")
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(cl.Object, []any{map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"}}, "spec", "taints"))
			_, err = e.host.Update(ctx, federation.ClusterGVR, cl)
			require.NoError(t, err)
			pass()
			s := e.fed(t).Status.Schedule
			require.Len(t, s.Evictions, 1, "%+v", s)
			require.Contains(t, schedule(t, e), "azure", "azure keeps its replicas while the eviction lasts")
			require.NotNil(t, e.member(t, "azure"))

			// No member reports its replicas available here: the grace period ends it.
			e.clock.Step(time.Duration(federation.DefaultGracePeriodSeconds) * time.Second)
			pass()
			m := e.member(t, "azure")
			if !tc.release {
				require.Nil(t, m, "Graciously: the copy is deleted once the eviction ends")
				require.Empty(t, e.fed(t).Status.Schedule.Evictions)
				return
			}
			require.NotNil(t, m, "Never: the copy stays")
			require.NotContains(t, m.GetLabels(), federation.ManagedByLabel, "and is no longer the federation's")
			pass()
			fed := e.fed(t)
			require.NotContains(t, schedule(t, e), "azure")
			for _, c := range fed.Status.Clusters {
				require.NotEqual(t, "azure", c.Name, "released: no longer listed")
			}
			require.Empty(t, fed.Status.Schedule.Evictions, "nothing of the eviction is left")
			require.NotNil(t, e.member(t, "azure"))
			released := e.member(t, "azure").GetUID()

			// Placed there again (azure undrained, the preference rebalancing): sync takes its
			// released copy back, rather than report a stranger's object (AlreadyExists).
			cl, err = e.host.Get(ctx, federation.ClusterGVR, "", "azure")
			require.NoError(t, err)
			unstructured.RemoveNestedField(cl.Object, "spec", "taints")
			_, err = e.host.Update(ctx, federation.ClusterGVR, cl)
			require.NoError(t, err)
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 6, rebalance: true, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}
`)
			pass()
			pass()
			require.Contains(t, schedule(t, e), "azure")
			m = e.member(t, "azure")
			require.Equal(t, released, m.GetUID(), "the same copy")
			require.Equal(t, federation.ManagedByValue, m.GetLabels()[federation.ManagedByLabel], "taken back: %s", propagation(e.fed(t))["azure"])
			require.NotContains(t, propagation(e.fed(t))["azure"], plan.ReasonAlreadyExists)
		})
	}
}

// TestFailoverWithoutPreferenceNeverIntoNothing: a workload without a preference (each cluster
// runs the template's 6 replicas) placed in azure alone. azure is drained: no other cluster
// may take the workload, so azure keeps its copy, however long. aws then joins the placement:
// it gets a copy, and azure's goes only once aws's is available; sampled after every step,
// the fleet never has fewer than 6 available.
func TestFailoverWithoutPreferenceNeverIntoNothing(t *testing.T) {
	x := newFailoverFleet(t, "", 0)
	x.place(t, "azure")
	for range 10 {
		x.step(t)
	}
	require.Equal(t, map[string]int64{"aws": -1, "gcp": -1, "azure": 6}, x.available(t), "steady before the drain")

	x.taint(t, "azure", drainTaint)
	for i := range 80 { // past the grace period
		x.step(t)
		require.Equal(t, int64(6), x.available(t)["azure"], "step %d: the only copy went while nothing else runs the workload", i)
	}
	var msg string
	for _, c := range x.fed(t).Status.Conditions {
		if c.Type == federation.ConditionScheduled {
			msg = c.Message
		}
	}
	require.Contains(t, msg, "not evicted, as they fit nowhere else: azure keeps 6 replica(s)")

	x.place(t, "aws", "azure")
	var trace []string
	for i := range 30 {
		x.step(t)
		a := x.available(t)
		trace = append(trace, fmt.Sprint(a))
		require.GreaterOrEqual(t, sum(a), int64(6), "step %d: capacity dropped: %v", i, trace)
		if a["azure"] == -1 {
			break
		}
	}
	require.Equal(t, map[string]int64{"aws": 6, "gcp": -1, "azure": -1}, x.available(t), "%v", trace)
	require.Greater(t, len(trace), 3, "aws's copy took its 30s: azure kept its own meanwhile: %v", trace)
}

// TestFailoverNoReplicasIntoABlockedCluster: azure holds a Deployment of the same name that the
// federation does not manage, so sync cannot propagate there (AlreadyExists). The preference,
// rebalancing, takes azure in: the scheduler may try azure once, but no replica moves there
// for good, and no eviction waiting on azure ends at its deadline with the capacity lost. aws
// and gcp keep their 8 available, sampled after every step, well past the grace period.
func TestFailoverNoReplicasIntoABlockedCluster(t *testing.T) {
	x := newFailoverFleet(t, `{targetKind: FederatedDeployment, totalReplicas: 8, rebalance: true, intersectWithClusterSelector: true, clusters: {aws: {weight: 1}, gcp: {weight: 1}}}`, 0)
	for range 10 {
		x.step(t)
	}
	require.Equal(t, map[string]int64{"aws": 4, "gcp": 4, "azure": -1}, x.available(t), "steady")
	fedtest.Create(t, x.f.Member(t, "azure"), federation.NamespaceType.TargetGVR(), `{apiVersion: v1, kind: Namespace, metadata: {name: production}}`)
	fedtest.Create(t, x.f.Member(t, "azure"), federation.DeploymentType.TargetGVR(), `
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-frontend, namespace: production}
spec:
  replicas: 1
  selector: {matchLabels: {app: other}}
  template:
    metadata: {labels: {app: other}}
    spec: {containers: [{name: other, image: "other:1"}]}
`)
	fedtest.Apply(t, x.f.Host, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 8, rebalance: true, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}}
`)
	var trace []string
	for i := range 80 {
		x.step(t)
		a := x.available(t)
		trace = append(trace, fmt.Sprint(a))
		require.GreaterOrEqual(t, a["aws"]+a["gcp"], int64(8), "step %d: capacity lost to the blocked cluster: %v", i, trace)
	}
	s := x.fed(t).Status.Schedule
	require.Empty(t, s.Evictions, "nothing waits on azure")
	for _, c := range s.Clusters {
		if c.Name == "azure" {
			require.Zero(t, c.Replicas, "azure takes no replicas while sync cannot propagate there")
		}
	}
	require.Contains(t, propagation(x.fed(t))["azure"], plan.ReasonAlreadyExists)
}
