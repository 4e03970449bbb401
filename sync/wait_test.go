package sync_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// six is a FederatedDeployment of 6 replicas placed in the three clusters; spread is a
// preference dividing 9 among them (3 each), broken one that is invalid.
const (
	six = `
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
	spread = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}
`
	broken = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {minReplicas: 5, maxReplicas: 2}}}
`
)

// replicasWritten lists, per member cluster, the spec.replicas of the Deployments sync created
// or updated there, in order, a count repeated by the next write once (a create refused for
// want of the namespace is tried again): what ran, not only what runs now.
func replicasWritten(t *testing.T, e *env) map[string][]int64 {
	t.Helper()
	out := map[string][]int64{}
	for _, name := range clusterNames {
		for _, a := range e.cluster(t, name).Actions() {
			if a.Resource != deployments {
				continue // the namespace sync creates first
			}
			switch a.Verb {
			case fake.VerbCreate, fake.VerbUpdate:
				n := replicas(a.Object)
				if l := len(out[name]); l == 0 || out[name][l-1] != n {
					out[name] = append(out[name], n)
				}
			case fake.VerbPatch:
				t.Fatalf("%s: a patch of the member object, which this test does not read: %s", name, a.Patch)
			}
		}
	}
	return out
}

func (e *env) scheduler(t *testing.T) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(e.host, e.typ, scheduler.Options{Clock: e.clock})
	require.NoError(t, err)
	return s
}

// A new object's first sync pass comes before the scheduler's first write (the two loops
// race on the same watch event). Without WaitForScheduler, sync pushes the template's 6
// replicas to every cluster, 18 in all for a preference of 9, until the schedule comes;
// with it, sync waits, and every member is created with its scheduled 3.
func TestWaitForSchedulerOnANewObject(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait bool
		want map[string][]int64
	}{
		{name: "waits", wait: true, want: map[string][]int64{"aws": {3}, "gcp": {3}, "azure": {3}}},
		{name: "without the option, as before", want: map[string][]int64{"aws": {6, 3}, "gcp": {6, 3}, "azure": {6, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{WaitForScheduler: tc.wait})
			sched := e.scheduler(t)
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, spread)
			e.apply(t, e.typ.FederatedGVR(), six)

			res := e.reconcile(t) // sync first
			if tc.wait {
				require.Positive(t, res.RequeueAfter, "back soon, should no watch bring it back")
				c := propagated(e.fed(t))
				require.Equal(t, plan.ReasonWaitingForSchedule, c.Reason)
				require.Equal(t, metav1.ConditionFalse, c.Status)
				require.EqualValues(t, 1, c.ObservedGeneration)
				require.Empty(t, e.fed(t).Finalizers, "nothing propagated: nothing to clean up")
				// Passes while waiting write nothing more.
				before := e.writes()
				e.reconcile(t)
				require.Equal(t, before, e.writes(), "a waiting pass rewrote the status")
			}
			_, err := sched.Reconcile(ctx, key)
			require.NoError(t, err)
			e.converge(t, 5)

			if diff := cmp.Diff(tc.want, replicasWritten(t, e)); diff != "" {
				t.Errorf("replicas written to the members (-want +got):\n%s", diff)
			}
			c := propagated(e.fed(t))
			require.Equal(t, plan.ReasonPropagated, c.Reason, c.Message)
		})
	}
}

// With both loops running, and sync's first pass before the scheduler's (the scheduler starts
// once sync has passed over the new object), no member ever runs the template's count: the
// scheduler's write brings the object back to sync through its watch (the fake clock never
// reaches the waiting pass's requeue).
func TestWaitForSchedulerRunning(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t, fedsync.Options{WaitForScheduler: true})
	stop := e.running(t)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, spread)
	e.apply(t, e.typ.FederatedGVR(), six)
	fedtest.Eventually(t, "sync's first pass", func() bool { return e.passes(t) > 0 })

	sched := e.scheduler(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sched.Run(ctx) }()
	fedtest.Eventually(t,

		"propagated", func() bool {
			return propagated(e.fed(t)).Reason == plan.ReasonPropagated
		})

	require.NoError(t, stop())
	cancel()
	require.NoError(t, <-done)
	if diff := cmp.Diff(map[string][]int64{"aws": {3}, "gcp": {3}, "azure": {3}}, replicasWritten(t, e)); diff != "" {
		t.Errorf("replicas written to the members (-want +got):\n%s", diff)
	}
}

// An invalid preference on a new object: the scheduler writes Scheduled=False and no
// schedule. Sync creates nothing (without the option it would create the template's count
// everywhere), says why, and propagates once the preference is fixed.
func TestWaitForSchedulerInvalidPreference(t *testing.T) {
	e := newEnv(t, fedsync.Options{WaitForScheduler: true})
	sched := e.scheduler(t)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, broken)
	e.apply(t, e.typ.FederatedGVR(), six)
	_, err := sched.Reconcile(ctx, key)
	require.True(t, federation.IsTerminal(err), "%v", err)

	e.clearActions()
	res := e.reconcile(t)
	require.Positive(t, res.RequeueAfter)
	require.Empty(t, replicasWritten(t, e), "a member object was written")
	c := propagated(e.fed(t))
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, plan.ReasonNotScheduled, c.Reason)
	require.Contains(t, c.Message, "the scheduler did not schedule generation 1 (Scheduled=False, InvalidPreference: ReplicaSchedulingPreference production/app-frontend is invalid: spec.clusters[*].maxReplicas")
	require.Equal(t, []string{"Warning NotScheduled " + c.Message}, e.events.list())

	// No churn: the same state writes nothing again.
	before := e.writes()
	e.reconcile(t)
	require.Equal(t, before, e.writes())
	require.Len(t, e.events.list(), 1)

	// Fixed: the scheduler's write brings sync back, and it propagates the schedule.
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, spread)
	_, err = sched.Reconcile(ctx, key)
	require.NoError(t, err)
	e.converge(t, 5)
	if diff := cmp.Diff(map[string][]int64{"aws": {3}, "gcp": {3}, "azure": {3}}, replicasWritten(t, e)); diff != "" {
		t.Errorf("replicas written to the members (-want +got):\n%s", diff)
	}
}

// Member objects that run already (sync ran without a scheduler before) are left as they
// are while the scheduler refuses the object: never deleted, never rescaled.
func TestWaitForSchedulerLeavesMembersAlone(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), six)
	e.converge(t, 5)
	for _, name := range clusterNames {
		require.EqualValues(t, 6, replicas(e.member(t, name)), name)
	}
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, broken)
	_, err := e.scheduler(t).Reconcile(ctx, key)
	require.True(t, federation.IsTerminal(err), "%v", err)

	waiting, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, WaitForScheduler: true})
	require.NoError(t, err)
	e.clearActions()
	_, err = waiting.Reconcile(ctx, key)
	require.NoError(t, err)
	for _, name := range clusterNames {
		require.Empty(t, e.memberWrites(t, name), name)
		require.EqualValues(t, 6, replicas(e.member(t, name)), name)
	}
	require.Equal(t, plan.ReasonNotScheduled, propagated(e.fed(t)).Reason)
}

// Deletion never waits for the scheduler.
func TestWaitForSchedulerDeletion(t *testing.T) {
	t.Run("a new object", func(t *testing.T) {
		e := newEnv(t, fedsync.Options{WaitForScheduler: true})
		e.apply(t, e.typ.FederatedGVR(), six)
		e.reconcile(t)
		require.Equal(t, plan.ReasonWaitingForSchedule, propagated(e.fed(t)).Reason)
		require.NoError(t, e.host.Delete(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name, deleteOpts()))
		_, err := e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
		require.Error(t, err, "gone at once: nothing was propagated, so no finalizer held it")
		e.reconcile(t)
		for _, name := range clusterNames {
			require.Empty(t, e.memberWrites(t, name), name)
		}
	})
	t.Run("a new generation not scheduled yet", func(t *testing.T) {
		e := newEnv(t, fedsync.Options{WaitForScheduler: true})
		sched := e.scheduler(t)
		e.apply(t, federation.ReplicaSchedulingPreferenceGVR, spread)
		e.apply(t, e.typ.FederatedGVR(), six)
		_, err := sched.Reconcile(ctx, key)
		require.NoError(t, err)
		e.converge(t, 5)
		require.NotNil(t, e.member(t, "aws"))
		e.edit(t, setImage("nginx:1.22"))
		e.reconcile(t) // waits for the scheduler
		require.Equal(t, frontendImage, image(t, e.member(t, "aws")))

		require.NoError(t, e.host.Delete(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name, deleteOpts()))
		e.reconcile(t)
		for _, name := range clusterNames {
			require.Nil(t, e.member(t, name), name)
		}
		_, err = e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
		require.Error(t, err, "the finalizer was not removed")
	})
}

// The waiting pass's status write meets a Conflict because the scheduler wrote meanwhile: the
// re-read carries the schedule, so the pass writes nothing over it (no WaitingForSchedule on
// a scheduled object), and the next pass propagates.
func TestWaitForSchedulerConflictMeetsTheSchedule(t *testing.T) {
	e := newEnv(t, fedsync.Options{WaitForScheduler: true})
	sched := e.scheduler(t)
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, spread)
	e.apply(t, e.typ.FederatedGVR(), six)

	var interposed, syncWrites atomic.Int32
	var inScheduler atomic.Bool
	e.host.SetHooks(fake.Hooks{UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if inScheduler.Load() {
			return next.UpdateStatus(ctx, gvr, obj)
		}
		syncWrites.Add(1)
		if interposed.CompareAndSwap(0, 1) {
			// sync's waiting write: the scheduler's own write goes first, so sync's copy is
			// stale.
			inScheduler.Store(true)
			_, err := sched.Reconcile(ctx, key)
			inScheduler.Store(false)
			if err != nil {
				return nil, err
			}
		}
		return next.UpdateStatus(ctx, gvr, obj)
	}})
	res := e.reconcile(t)
	e.host.SetHooks(fake.Hooks{})
	require.Positive(t, res.RequeueAfter)
	require.EqualValues(t, 1, interposed.Load(), "the scheduler wrote during sync's waiting write")
	require.EqualValues(t, 1, syncWrites.Load(), "sync's stale write reached the host once (and met a Conflict)")

	f := e.fed(t)
	require.NotNil(t, f.Status.Schedule, "the scheduler's schedule survives")
	require.Nil(t, meta.FindStatusCondition(f.Status.Conditions, federation.ConditionPropagated), "no WaitingForSchedule over a schedule")
	require.Empty(t, replicasWritten(t, e), "the waiting pass wrote no member")

	e.converge(t, 5)
	if diff := cmp.Diff(map[string][]int64{"aws": {3}, "gcp": {3}, "azure": {3}}, replicasWritten(t, e)); diff != "" {
		t.Errorf("replicas written to the members (-want +got):\n%s", diff)
	}
	require.Equal(t, plan.ReasonPropagated, propagated(e.fed(t)).Reason)
}

// A cluster that was not ready when the scheduler last ran is absent from the schedule. When
// it is Ready again, sync may run before the scheduler has placed it again: sync must wait
// for the scheduler rather than delete the member objects there as "no longer placed" (found
// by the chaos soak, test/soak, in Run mode: a member that blipped lost a FederatedNamespace's
// namespace, and with it everything inside, until the scheduler caught up).
func TestSyncWaitsForTheSchedulerWhenAClusterIsReadyAgain(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	sched, err := scheduler.New(e.host, e.typ, scheduler.Options{Clock: e.clock})
	require.NoError(t, err)
	pass := func() {
		t.Helper()
		_, err := sched.Reconcile(ctx, key)
		require.NoError(t, err)
		_, _ = e.s.Reconcile(ctx, key)
	}
	e.apply(t, e.typ.FederatedGVR(), frontend)
	// Purge mode Immediately: the schedule drops azure at once, with no eviction keeping its
	// copy listed meanwhile (graceful eviction would keep it in the schedule).
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, string(federation.PurgeImmediately), "spec", "placement", "failover", "purgeMode")
	})
	pass()
	require.NotNil(t, e.member(t, "azure"))

	// azure is cut off; the monitor (here Register) marks it not Ready; the scheduler leaves
	// it out; sync leaves its object alone, as it must for a cluster that is not ready.
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	pass()
	require.NotContains(t, schedule(t, e), "azure")

	// azure is back; sync runs first.
	require.NoError(t, e.fleet.Heal("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	res, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.NotNil(t, e.member(t, "azure"), "deleted from a cluster the scheduler has not looked at since it is ready")
	require.Positive(t, res.RequeueAfter, "back once the scheduler has")

	// The scheduler places azure again; nothing was lost.
	pass()
	require.Contains(t, schedule(t, e), "azure")
	require.NotNil(t, e.member(t, "azure"))
}

func schedule(t *testing.T, e *env) []string {
	t.Helper()
	fed := e.fed(t)
	require.NotNil(t, fed.Status.Schedule)
	var out []string
	for _, c := range fed.Status.Schedule.Clusters {
		out = append(out, c.Name)
	}
	return out
}
