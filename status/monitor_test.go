package status_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/status"
)

// monitorEnv is a host and a fleet whose members are registered as Clusters, and a monitor.
type monitorEnv struct {
	host  *fake.Cluster
	fleet *fake.Fleet
	clock *clocktesting.FakeClock
	m     *status.ClusterMonitor
}

// alone is the disruption rule of a monitor whose fleet is one cluster, off: its only
// cluster lost would be a fleet disruption (placement.FleetDisruption), never evicted.
var alone = placement.DisruptionOptions{Disabled: true}

func newMonitorEnv(t testing.TB, opts status.MonitorOptions, names ...string) *monitorEnv {
	t.Helper()
	e := &monitorEnv{host: newHost(t), fleet: fake.NewFleet(), clock: clocktesting.NewFakeClock(t0)}
	e.host.SetClock(e.clock)
	e.fleet.SetClock(e.clock)
	for _, n := range names {
		e.fleet.Add(n, map[string]string{federation.RegionLabel: "eu-west-1", federation.ZoneLabel: "eu-west-1a"})
	}
	require.NoError(t, e.fleet.Register(ctx, e.host))
	opts.Clock = e.clock
	m, err := status.NewClusterMonitor(e.host, e.fleet, opts)
	require.NoError(t, err)
	e.m = m
	e.host.ClearActions()
	return e
}

// probe runs one pass for cluster and returns what was written: "taints" and "status", in
// order.
func (e *monitorEnv) probe(t testing.TB, cluster string) (federation.Result, []string) {
	t.Helper()
	e.host.ClearActions()
	res, err := e.m.Reconcile(ctx, federation.Key{Name: cluster})
	require.NoError(t, err)
	var writes []string
	for _, a := range e.host.Actions() {
		switch a.Verb {
		case fake.VerbUpdate:
			writes = append(writes, "taints")
		case fake.VerbUpdateStatus:
			writes = append(writes, "status")
		case fake.VerbCreate, fake.VerbPatch, fake.VerbDelete:
			t.Fatalf("unexpected write %s", a)
		}
	}
	return res, writes
}

func (e *monitorEnv) cluster(t testing.TB, name string) *federation.Cluster {
	t.Helper()
	u, err := e.host.Peek(federation.ClusterGVR, "", name)
	require.NoError(t, err)
	c, err := federation.ClusterFromUnstructured(u)
	require.NoError(t, err)
	return c
}

func conditionOf(c *federation.Cluster, typ string) metav1.Condition {
	if cond := meta.FindStatusCondition(c.Status.Conditions, typ); cond != nil {
		return *cond
	}
	return metav1.Condition{}
}

// monitorTaints returns the cluster's taints as key:effect.
func monitorTaints(c *federation.Cluster) []string {
	var out []string
	for _, t := range c.Spec.Taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	return out
}

func TestMonitorHealthyClusterWritesOnlyHeartbeats(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	res, writes := e.probe(t, "eu")
	require.Equal(t, []string{"status"}, writes, "the first probe records version, capacity, Offline")
	require.Equal(t, status.DefaultProbePeriod, res.RequeueAfter)
	c := e.cluster(t, "eu")
	require.Equal(t, metav1.ConditionTrue, conditionOf(c, federation.ConditionReady).Status)
	require.Equal(t, metav1.ConditionFalse, conditionOf(c, federation.ConditionOffline).Status)
	require.Equal(t, "v1.37.2-fake", c.Status.KubernetesVersion)
	requireAt(t, t0, c.Status.LastHeartbeatTime)
	require.Equal(t, "8", c.Status.Capacity.Cpu().String())
	require.Equal(t, "110", c.Status.Available.Pods().String())
	require.Empty(t, c.Spec.Taints)

	total := 0
	for range 360 { // an hour of 10s probes
		e.clock.Step(10 * time.Second)
		_, writes := e.probe(t, "eu")
		total += len(writes)
	}
	require.Equal(t, 60, total, "one heartbeat a minute, nothing else")
	requireAt(t, t0.Add(time.Hour), e.cluster(t, "eu").Status.LastHeartbeatTime)
}

// TestMonitorThresholds: a partitioned cluster turns not Ready only on the third failed probe
// in a row; the taints land before the status says so; healing turns it Ready on the third
// success in a row (SuccessThreshold) and removes the taints after the status.
func TestMonitorThresholds(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	e.probe(t, "eu")
	require.NoError(t, e.fleet.Partition("eu"))
	for i := 1; i <= 2; i++ {
		e.clock.Step(10 * time.Second)
		_, writes := e.probe(t, "eu")
		require.Empty(t, writes, "failure %d", i)
		require.Equal(t, metav1.ConditionTrue, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status)
	}
	e.clock.Step(10 * time.Second)
	res, writes := e.probe(t, "eu")
	require.Equal(t, []string{"taints", "status"}, writes)
	c := e.cluster(t, "eu")
	ready := conditionOf(c, federation.ConditionReady)
	require.Equal(t, metav1.ConditionFalse, ready.Status)
	require.Equal(t, status.ReasonClusterUnreachable, ready.Reason)
	require.Contains(t, ready.Message, "3 probes in a row failed")
	requireAt(t, t0.Add(30*time.Second), &ready.LastTransitionTime)
	require.Equal(t, metav1.ConditionTrue, conditionOf(c, federation.ConditionOffline).Status)
	require.Equal(t, []string{federation.TaintClusterNotReady + ":NoSchedule", federation.TaintClusterUnreachable + ":NoSchedule"}, monitorTaints(c))
	requireAt(t, t0, c.Status.LastHeartbeatTime, "no heartbeat while unreachable")
	require.Equal(t, status.DefaultProbePeriod, res.RequeueAfter)

	// More failures change nothing.
	for range 5 {
		e.clock.Step(10 * time.Second)
		_, writes := e.probe(t, "eu")
		require.Empty(t, writes)
	}

	require.NoError(t, e.fleet.Heal("eu"))
	for i := 1; i <= 2; i++ {
		e.clock.Step(10 * time.Second)
		_, writes = e.probe(t, "eu")
		require.NotContains(t, writes, "taints", "success %d", i) // status: the heartbeat of a cluster that answers again
		require.Equal(t, metav1.ConditionFalse, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status, "success %d", i)
	}
	e.clock.Step(10 * time.Second)
	_, writes = e.probe(t, "eu")
	require.Equal(t, []string{"status", "taints"}, writes)
	c = e.cluster(t, "eu")
	require.Equal(t, metav1.ConditionTrue, conditionOf(c, federation.ConditionReady).Status)
	require.Equal(t, metav1.ConditionFalse, conditionOf(c, federation.ConditionOffline).Status)
	require.Empty(t, c.Spec.Taints)
	requireAt(t, e.clock.Now(), c.Status.LastHeartbeatTime, "refreshed on the transition")
}

// TestMonitorFlapping: failures that never come three in a row never flip the cluster.
func TestMonitorFlapping(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	e.probe(t, "eu")
	for i := range 30 {
		if i%3 == 2 {
			require.NoError(t, e.fleet.Heal("eu"))
		} else {
			require.NoError(t, e.fleet.Partition("eu"))
		}
		e.clock.Step(10 * time.Second)
		e.probe(t, "eu")
		require.Equal(t, metav1.ConditionTrue, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status, "probe %d", i)
	}
	require.Empty(t, e.cluster(t, "eu").Spec.Taints)
}

// TestMonitorSuccessThreshold: with SuccessThreshold 2, one success after an outage is not
// enough, and a failure in between starts the count again.
func TestMonitorSuccessThreshold(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{SuccessThreshold: 2, FailureThreshold: 1}, "eu")
	e.probe(t, "eu")
	require.NoError(t, e.fleet.Partition("eu"))
	e.clock.Step(10 * time.Second)
	e.probe(t, "eu")
	isReady := func() metav1.ConditionStatus {
		return conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status
	}
	require.Equal(t, metav1.ConditionFalse, isReady(), "FailureThreshold 1")
	for _, step := range []struct {
		partitioned bool
		want        metav1.ConditionStatus
	}{{false, metav1.ConditionFalse}, {true, metav1.ConditionFalse}, {false, metav1.ConditionFalse}, {false, metav1.ConditionTrue}} {
		if step.partitioned {
			require.NoError(t, e.fleet.Partition("eu"))
		} else {
			require.NoError(t, e.fleet.Heal("eu"))
		}
		e.clock.Step(10 * time.Second)
		e.probe(t, "eu")
		require.Equal(t, step.want, isReady())
	}
}

// TestMonitorEvictionDelay: the taints turn NoExecute EvictionDelay after Ready stopped
// being True, and the Result asks to come back then; user taints stay where they are.
func TestMonitorEvictionDelay(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{Disruption: alone, Period: time.Minute, FailureThreshold: 1}, "eu")
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"key": "gpu", "value": "true", "effect": "NoSchedule"},
	}, "spec", "taints"))
	_, err = e.host.Update(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)

	require.NoError(t, e.fleet.Partition("eu"))
	res, _ := e.probe(t, "eu")
	require.Equal(t, time.Minute, res.RequeueAfter)
	require.Equal(t, []string{"gpu:NoSchedule", federation.TaintClusterNotReady + ":NoSchedule", federation.TaintClusterUnreachable + ":NoSchedule"},
		monitorTaints(e.cluster(t, "eu")))
	e.clock.Step(4*time.Minute + 30*time.Second)
	res, writes := e.probe(t, "eu")
	require.Empty(t, writes)
	require.Equal(t, 30*time.Second, res.RequeueAfter, "the eviction delay ends before the next period")
	e.clock.Step(30 * time.Second)
	_, writes = e.probe(t, "eu")
	require.Equal(t, []string{"taints", "status"}, writes, "the NoExecute taint, then the Failover condition")
	c := e.cluster(t, "eu")
	require.Equal(t, []string{"gpu:NoSchedule", federation.TaintClusterNotReady + ":NoExecute", federation.TaintClusterUnreachable + ":NoExecute"}, monitorTaints(c))
	requireAt(t, e.clock.Now(), c.Spec.Taints[1].TimeAdded)

	require.NoError(t, e.fleet.Heal("eu"))
	for range status.DefaultSuccessThreshold {
		e.clock.Step(time.Minute)
		e.probe(t, "eu")
	}
	require.Equal(t, []string{"gpu:NoSchedule"}, monitorTaints(e.cluster(t, "eu")))
}

// TestMonitorNotReadyAnswer: an API server that answers but not ready is not Ready and not
// Offline, and only gets the not-ready taint.
func TestMonitorNotReadyAnswer(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{FailureThreshold: 1}, "eu")
	m, _ := e.fleet.Member("eu")
	m.FailOn(fake.VerbHealth, apierrors.NewInternalError(errorString("[-]etcd failed: reason withheld")), 0)
	e.probe(t, "eu")
	c := e.cluster(t, "eu")
	ready := conditionOf(c, federation.ConditionReady)
	require.Equal(t, status.ReasonClusterNotReady, ready.Reason, ready.Message)
	require.Contains(t, ready.Message, "etcd failed")
	require.Equal(t, metav1.ConditionFalse, conditionOf(c, federation.ConditionOffline).Status)
	require.Equal(t, []string{federation.TaintClusterNotReady + ":NoSchedule"}, monitorTaints(c))
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestMonitorProbeTimeout: a probe that takes longer than Timeout counts as unreachable.
func TestMonitorProbeTimeout(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{FailureThreshold: 1}, "eu")
	m, _ := e.fleet.Member("eu")
	m.SetLatency(fake.VerbHealth, time.Minute)
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Reconcile(ctx, federation.Key{Name: "eu"})
		done <- err
	}()
	for e.clock.Waiters() < 2 { // the member's latency and the probe's timeout
		runtime.Gosched()
	}
	e.clock.Step(status.DefaultProbeTimeout)
	require.NoError(t, <-done)
	ready := conditionOf(e.cluster(t, "eu"), federation.ConditionReady)
	require.Equal(t, status.ReasonClusterUnreachable, ready.Reason)
	require.Contains(t, ready.Message, "no answer within 3s")
}

// TestMonitorClientUnavailable: a cluster the set has no client for is not Ready, with
// Offline Unknown: nobody knows whether it answers.
func TestMonitorClientUnavailable(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{FailureThreshold: 1}, "eu")
	e.fleet.Remove("eu")
	e.probe(t, "eu")
	c := e.cluster(t, "eu")
	require.Equal(t, status.ReasonClientUnavailable, conditionOf(c, federation.ConditionReady).Reason)
	require.Equal(t, metav1.ConditionUnknown, conditionOf(c, federation.ConditionOffline).Status)
}

// TestMonitorNewCluster: a Cluster without conditions is probed at once: a success makes it
// Ready; a failure makes it Unknown (Probing) and tainted NoSchedule until the threshold.
func TestMonitorNewCluster(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu", "us")
	for _, n := range []string{"eu", "us"} {
		u, err := e.host.Get(ctx, federation.ClusterGVR, "", n)
		require.NoError(t, err)
		delete(u.Object, "status")
		_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
		require.NoError(t, err)
	}
	e.probe(t, "eu")
	require.Equal(t, metav1.ConditionTrue, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status)

	require.NoError(t, e.fleet.Partition("us"))
	_, writes := e.probe(t, "us")
	require.Equal(t, []string{"taints", "status"}, writes)
	c := e.cluster(t, "us")
	require.Equal(t, status.ReasonProbing, conditionOf(c, federation.ConditionReady).Reason)
	require.Equal(t, []string{federation.TaintClusterNotReady + ":NoSchedule"}, monitorTaints(c))
	e.clock.Step(10 * time.Second)
	_, writes = e.probe(t, "us")
	require.Empty(t, writes)
	e.clock.Step(10 * time.Second)
	e.probe(t, "us")
	require.Equal(t, status.ReasonClusterUnreachable, conditionOf(e.cluster(t, "us"), federation.ConditionReady).Reason)
}

// TestMonitorRestart: a new monitor has no counters; the Cluster's conditions are the state.
func TestMonitorRestart(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	require.NoError(t, e.fleet.Partition("eu"))
	for range 3 {
		e.probe(t, "eu")
		e.clock.Step(10 * time.Second)
	}
	require.Equal(t, metav1.ConditionFalse, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status)

	m, err := status.NewClusterMonitor(e.host, e.fleet, status.MonitorOptions{Clock: e.clock})
	require.NoError(t, err)
	e.m = m
	_, writes := e.probe(t, "eu")
	require.Empty(t, writes, "still unreachable: nothing new")
	require.NoError(t, e.fleet.Heal("eu"))
	for range status.DefaultSuccessThreshold {
		e.clock.Step(10 * time.Second)
		e.probe(t, "eu")
	}
	require.Equal(t, metav1.ConditionTrue, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status)
}

// TestMonitorTaintConflict: a user who adds a taint while the monitor writes its own keeps it.
func TestMonitorTaintConflict(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{FailureThreshold: 1}, "eu")
	require.NoError(t, e.fleet.Partition("eu"))
	once := false
	e.host.SetHooks(fake.Hooks{Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if !once {
			once = true
			cur, err := next.Get(ctx, gvr, "", obj.GetName())
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedSlice(cur.Object, []any{map[string]any{"key": "team", "effect": "NoSchedule"}}, "spec", "taints"))
			_, err = next.Update(ctx, gvr, cur)
			require.NoError(t, err)
		}
		return next.Update(ctx, gvr, obj)
	}})
	e.probe(t, "eu")
	require.Equal(t, []string{"team:NoSchedule", federation.TaintClusterNotReady + ":NoSchedule", federation.TaintClusterUnreachable + ":NoSchedule"},
		monitorTaints(e.cluster(t, "eu")))
}

// TestMonitorDeletedCluster: a deleted Cluster's state is released and not probed again; a
// Cluster created again under its name starts counting from zero.
func TestMonitorDeletedCluster(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	e.probe(t, "eu")
	require.NoError(t, e.fleet.Partition("eu"))
	for range 2 { // one failure short of the threshold
		e.clock.Step(10 * time.Second)
		e.probe(t, "eu")
	}
	old, err := e.host.Peek(federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", "eu", metav1.DeleteOptions{}))
	res, writes := e.probe(t, "eu")
	require.Zero(t, res.RequeueAfter)
	require.Empty(t, writes)
	m, _ := e.fleet.Member("eu")
	m.ClearActions()
	e.probe(t, "eu")
	require.Empty(t, m.Actions(), "a gone Cluster is not probed")

	again := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": old.GetAPIVersion(), "kind": old.GetKind(), "metadata": map[string]any{"name": "eu"}, "spec": old.Object["spec"]}}
	_, err = e.host.Create(ctx, federation.ClusterGVR, again)
	require.NoError(t, err)
	e.clock.Step(10 * time.Second)
	e.probe(t, "eu")
	require.Equal(t, status.ReasonProbing, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Reason,
		"the new Cluster's first failure is its first: the old one's two were released")
}

// TestMonitorResources: capacity sums the allocatable of Ready, schedulable nodes; available
// subtracts the requests of unfinished pods bound to them or not bound yet; region and zones
// come from the nodes when the spec leaves them empty.
func TestMonitorResources(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	m, _ := e.fleet.Member("eu")
	node := func(name, zone string, ready, schedulable bool) *unstructured.Unstructured {
		cond := "True"
		if !ready {
			cond = "False"
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name, "labels": map[string]any{federation.RegionLabel: "eu-west-1", federation.ZoneLabel: zone}},
			"spec":     map[string]any{"unschedulable": !schedulable},
			"status": map[string]any{
				"allocatable": map[string]any{"cpu": "4", "memory": "16Gi", "pods": "110"},
				"conditions":  []any{map[string]any{"type": "Ready", "status": cond}},
			},
		}}
	}
	pod := func(name, nodeName, phase, cpu string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec": map[string]any{"nodeName": nodeName, "containers": []any{map[string]any{
				"name": "c", "image": "nginx", "resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": "1Gi"}}}}},
			"status": map[string]any{"phase": phase},
		}}
	}
	require.NoError(t, m.Seed(
		node("n2", "eu-west-1b", true, true),
		node("n3", "eu-west-1c", false, true), // not Ready: no capacity
		node("n4", "eu-west-1c", true, false), // cordoned: no capacity
		pod("running", "eu-node-1", "Running", "500m"),
		pod("pending", "", "Pending", "1"),
		pod("done", "n2", "Succeeded", "2"),
		pod("elsewhere", "n3", "Running", "3"),
	))
	u, err := e.host.Get(ctx, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	unstructured.RemoveNestedField(u.Object, "spec", "region")
	unstructured.RemoveNestedField(u.Object, "spec", "zones")
	_, err = e.host.Update(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)

	e.probe(t, "eu")
	c := e.cluster(t, "eu")
	q := resource.MustParse
	requireResources(t, corev1.ResourceList{"cpu": q("12"), "memory": q("48Gi"), "pods": q("220")}, c.Status.Capacity)
	requireResources(t, corev1.ResourceList{"cpu": q("10500m"), "memory": q("46Gi"), "pods": q("218")}, c.Status.Available)
	require.Equal(t, "eu-west-1", c.Status.Region)
	require.Equal(t, []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}, c.Status.Zones)

	// A pod that finishes frees its room at the next heartbeat, not before.
	require.NoError(t, m.Drift(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "default", "running", func(o *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(o.Object, "Succeeded", "status", "phase")
	}))
	e.clock.Step(10 * time.Second)
	_, writes := e.probe(t, "eu")
	require.Empty(t, writes)
	e.clock.Step(50 * time.Second)
	_, writes = e.probe(t, "eu")
	require.Equal(t, []string{"status"}, writes)
	requireResources(t, corev1.ResourceList{"cpu": q("11"), "memory": q("47Gi"), "pods": q("219")}, e.cluster(t, "eu").Status.Available)
}

func requireResources(t testing.TB, want, got corev1.ResourceList) {
	t.Helper()
	require.Len(t, got, len(want), "%v", got)
	for name, q := range want {
		g, ok := got[name]
		require.True(t, ok, "%s missing from %v", name, got)
		require.Zero(t, q.Cmp(g), "%s: got %s, want %s", name, g.String(), q.String())
	}
}

// A Cluster being deleted stays while sync's finalizer holds it, and sync cleans up only in
// clusters that are Ready. So the monitor keeps probing it: a member that was cut off when its
// Cluster was deleted and recovers is Ready again, and sync can orphan (or delete) what it put
// there, instead of giving up after its deletion timeout with everything left behind, every
// deletion of an object placed there held as long (found by the chaos soak, test/soak).
func TestMonitorKeepsProbingALeavingCluster(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	require.NoError(t, e.host.Drift(federation.ClusterGVR, "", "eu", func(u *unstructured.Unstructured) {
		u.SetFinalizers([]string{"federation.k8s.io/sync-federateddeployments"})
	}))
	require.NoError(t, e.fleet.Partition("eu"))
	for range 3 {
		e.probe(t, "eu")
		e.clock.Step(10 * time.Second)
	}
	require.Equal(t, metav1.ConditionFalse, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status)

	require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", "eu", metav1.DeleteOptions{}))
	require.NoError(t, e.fleet.Heal("eu"))
	var res federation.Result
	for range status.DefaultSuccessThreshold {
		e.clock.Step(10 * time.Second)
		res, _ = e.probe(t, "eu")
	}
	require.Equal(t, metav1.ConditionTrue, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status, "the leaving cluster is back")
	require.Positive(t, res.RequeueAfter, "and still probed")
}

// TestMonitorFailoverStages: the Failover condition and one event per transition (a stage
// that changes with Ready is told in the Ready event): not Ready is
// NoSchedule (no new placements, with when NoExecute comes), then NoExecute after
// EvictionDelay, then Recovered once Ready holds again. A healthy cluster has no Failover
// condition, and a probe that changes no stage writes and records nothing.
func TestMonitorFailoverStages(t *testing.T) {
	rec := &fake.Recorder{}
	e := newMonitorEnv(t, status.MonitorOptions{Disruption: alone, Period: time.Minute, FailureThreshold: 1, Events: rec}, "eu")
	e.probe(t, "eu")
	require.Equal(t, metav1.Condition{}, conditionOf(e.cluster(t, "eu"), federation.ConditionFailover), "a healthy cluster has none")
	rec.Reset()

	stage := func(status metav1.ConditionStatus, reason, message string, since time.Time, events ...string) {
		t.Helper()
		c := conditionOf(e.cluster(t, "eu"), federation.ConditionFailover)
		require.Equal(t, status, c.Status)
		require.Equal(t, reason, c.Reason)
		require.Equal(t, message, c.Message)
		requireAt(t, since, &c.LastTransitionTime)
		if diff := cmp.Diff(events, eventStrings(rec)); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	}
	const on = "Cluster eu "

	require.NoError(t, e.fleet.Partition("eu"))
	e.clock.Step(time.Minute)
	e.probe(t, "eu")
	cut := t0.Add(time.Minute)
	noSchedule := "not Ready since 2026-11-30T12:01:00Z: taint federation.k8s.io/not-ready:NoSchedule, no new placements, the replicas running here stay; NoExecute (eviction) at 2026-11-30T12:06:00Z unless Ready again"
	ready := conditionOf(e.cluster(t, "eu"), federation.ConditionReady)
	stage(metav1.ConditionTrue, status.ReasonFailoverNoSchedule, noSchedule, cut,
		"Warning "+on+ready.Reason+": "+ready.Message+"; Failover NoSchedule: "+noSchedule)

	e.clock.Step(4 * time.Minute)
	_, writes := e.probe(t, "eu")
	require.Empty(t, writes, "nothing changes within the stage")
	stage(metav1.ConditionTrue, status.ReasonFailoverNoSchedule, noSchedule, cut)

	e.clock.Step(time.Minute)
	e.probe(t, "eu")
	noExecute := "not Ready since 2026-11-30T12:01:00Z: taint federation.k8s.io/not-ready:NoExecute since 2026-11-30T12:06:00Z, placements that do not tolerate it lose their replicas here (tolerationSeconds counts from then)"
	stage(metav1.ConditionTrue, status.ReasonFailoverNoExecute, noExecute, t0.Add(6*time.Minute),
		"Warning "+on+status.ReasonFailoverNoExecute+": "+noExecute)

	require.NoError(t, e.fleet.Heal("eu"))
	for range status.DefaultSuccessThreshold {
		e.clock.Step(time.Minute)
		e.probe(t, "eu")
	}
	back := t0.Add(9 * time.Minute)
	recovered := "Ready again since 2026-11-30T12:09:00Z; the monitor's taints are removed, placements may choose the cluster again"
	ready = conditionOf(e.cluster(t, "eu"), federation.ConditionReady)
	stage(metav1.ConditionFalse, status.ReasonFailoverRecovered, recovered, back,
		"Normal "+on+ready.Reason+": "+ready.Message+"; Failover Recovered: "+recovered)
	require.Empty(t, e.cluster(t, "eu").Spec.Taints)
}
