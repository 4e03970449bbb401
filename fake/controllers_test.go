package fake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
)

func newSimCluster(t *testing.T, w fake.Workloads) (*fake.Cluster, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newCluster(t, "sim")
	c.SetClock(clk)
	c.SetWorkloads(w)
	return c, clk
}

func readyOf(t *testing.T, c *fake.Cluster, gvr schema.GroupVersionResource, name string) (observed, ready int64) {
	t.Helper()
	u, err := c.Peek(gvr, "prod", name)
	require.NoError(t, err)
	observed, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	ready, _, _ = unstructured.NestedInt64(u.Object, "status", "readyReplicas")
	return observed, ready
}

func TestDeploymentBecomesReadyAfterDelay(t *testing.T) {
	c, clk := newSimCluster(t, fake.Workloads{Apps: true, ReadyAfter: 10 * time.Second})
	ctx := testCtx(t)
	mustCreate(t, c, deployGVR, deployment("prod", "web", 3))

	c.Tick() // sees generation 1
	obs, ready := readyOf(t, c, deployGVR, "web")
	require.Equal(t, [2]int64{0, 0}, [2]int64{obs, ready}, "not before ReadyAfter")

	clk.Step(9 * time.Second)
	c.Tick()
	obs, _ = readyOf(t, c, deployGVR, "web")
	require.Zero(t, obs)

	clk.Step(time.Second)
	c.Tick()
	got, err := c.Peek(deployGVR, "prod", "web")
	require.NoError(t, err)
	for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
		require.Equal(t, int64(3), nested(t, got, "status", f), f)
	}
	require.Equal(t, int64(1), nested(t, got, "status", "observedGeneration"))
	conds := nested(t, got, "status", "conditions").([]any)
	require.Equal(t, "Available", conds[0].(map[string]any)["type"])
	require.Equal(t, "True", conds[0].(map[string]any)["status"])

	// A quiet Tick writes nothing.
	rv := c.ResourceVersion()
	clk.Step(time.Minute)
	c.Tick()
	require.Equal(t, rv, c.ResourceVersion())

	// Scaling is a new generation: reported ReadyAfter later.
	d, err := c.Get(ctx, deployGVR, "prod", "web")
	require.NoError(t, err)
	_ = unstructured.SetNestedField(d.Object, int64(5), "spec", "replicas")
	_, err = c.Update(ctx, deployGVR, d)
	require.NoError(t, err)
	c.Tick()
	obs, ready = readyOf(t, c, deployGVR, "web")
	require.Equal(t, [2]int64{1, 3}, [2]int64{obs, ready})
	clk.Step(10 * time.Second)
	c.Tick()
	obs, ready = readyOf(t, c, deployGVR, "web")
	require.Equal(t, [2]int64{2, 5}, [2]int64{obs, ready})
}

func TestPodCapacity(t *testing.T) {
	c, clk := newSimCluster(t, fake.Workloads{Apps: true, PodCapacity: 5})
	ctx := testCtx(t)
	mustCreate(t, c, deployGVR, deployment("prod", "old", 3))
	clk.Step(time.Second) // "new" is younger: served after "old"
	mustCreate(t, c, deployGVR, deployment("prod", "new", 4))
	sts := deployment("prod", "db", 2)
	sts.SetKind("StatefulSet")
	stsGVR := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	clk.Step(time.Second)
	mustCreate(t, c, stsGVR, sts)
	c.Tick()

	_, ready := readyOf(t, c, deployGVR, "old")
	require.Equal(t, int64(3), ready)
	_, ready = readyOf(t, c, deployGVR, "new")
	require.Equal(t, int64(2), ready, "only 2 of 4 fit")
	_, ready = readyOf(t, c, stsGVR, "db")
	require.Equal(t, int64(0), ready, "nothing left")
	newer, err := c.Peek(deployGVR, "prod", "new")
	require.NoError(t, err)
	require.Equal(t, int64(4), nested(t, newer, "status", "replicas"))
	require.Equal(t, int64(2), nested(t, newer, "status", "unavailableReplicas"))
	require.Equal(t, "False", nested(t, newer, "status", "conditions").([]any)[0].(map[string]any)["status"])

	// Deleting the old one frees capacity.
	require.NoError(t, c.Delete(ctx, deployGVR, "prod", "old", metav1.DeleteOptions{}))
	c.Tick()
	_, ready = readyOf(t, c, deployGVR, "new")
	require.Equal(t, int64(4), ready)
	_, ready = readyOf(t, c, stsGVR, "db")
	require.Equal(t, int64(1), ready)
}

// TestFailingImages: a workload running a failing image is observed and updated but never
// ready; changing its image back makes it ready at the next tick. Other workloads are
// unaffected.
func TestFailingImages(t *testing.T) {
	c, clk := newSimCluster(t, fake.Workloads{Apps: true, FailingImages: []string{"nginx:broken"}})
	ctx := testCtx(t)
	mustCreate(t, c, deployGVR, deployment("prod", "ok", 2))
	bad := deployment("prod", "bad", 3)
	require.NoError(t, unstructured.SetNestedSlice(bad.Object, []any{
		map[string]any{"name": "app", "image": "nginx:1.27"},
		map[string]any{"name": "sidecar", "image": "nginx:broken"},
	}, "spec", "template", "spec", "containers"))
	mustCreate(t, c, deployGVR, bad)
	for range 3 {
		c.Tick()
		clk.Step(time.Minute)
	}
	obs, ready := readyOf(t, c, deployGVR, "bad")
	require.Equal(t, [2]int64{1, 0}, [2]int64{obs, ready}, "observed, never ready")
	got, err := c.Peek(deployGVR, "prod", "bad")
	require.NoError(t, err)
	require.Equal(t, int64(3), nested(t, got, "status", "updatedReplicas"))
	available, _, _ := unstructured.NestedInt64(got.Object, "status", "availableReplicas")
	require.Zero(t, available)
	_, ready = readyOf(t, c, deployGVR, "ok")
	require.Equal(t, int64(2), ready)

	// Rolled back to a working image.
	got.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"] = []any{
		map[string]any{"name": "app", "image": "nginx:1.27"},
	}
	_, err = c.Update(ctx, deployGVR, got)
	require.NoError(t, err)
	c.Tick()
	obs, ready = readyOf(t, c, deployGVR, "bad")
	require.Equal(t, [2]int64{2, 3}, [2]int64{obs, ready})
}

func TestReplicaSetStatus(t *testing.T) {
	c, _ := newSimCluster(t, fake.Workloads{Apps: true})
	rs := deployment("prod", "rs", 2)
	rs.SetKind("ReplicaSet")
	rsGVR := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	mustCreate(t, c, rsGVR, rs)
	c.Tick()
	got, err := c.Peek(rsGVR, "prod", "rs")
	require.NoError(t, err)
	require.Equal(t, map[string]any{
		"observedGeneration": int64(1), "replicas": int64(2), "fullyLabeledReplicas": int64(2),
		"readyReplicas": int64(2), "availableReplicas": int64(2),
	}, got.Object["status"])
}

func TestSimulationOffByDefault(t *testing.T) {
	c := newCluster(t, "c")
	mustCreate(t, c, deployGVR, deployment("prod", "web", 1))
	mustCreate(t, c, serviceGVR, service("prod", "lb", "LoadBalancer"))
	c.Tick()
	require.Equal(t, int64(baseRV+2), c.ResourceVersion(), "nothing written")
}

func TestLoadBalancers(t *testing.T) {
	c, _ := newSimCluster(t, fake.Workloads{LoadBalancers: true, LoadBalancerIPs: []string{"203.0.113.1", "203.0.113.2"}})
	ctx := testCtx(t)
	mustCreate(t, c, serviceGVR, service("prod", "a", "LoadBalancer"))
	mustCreate(t, c, serviceGVR, service("prod", "b", "ClusterIP"))
	mustCreate(t, c, serviceGVR, service("prod", "c", "LoadBalancer"))
	mustCreate(t, c, serviceGVR, service("prod", "d", "LoadBalancer"))
	c.Tick()
	ips := func() map[string]any {
		out := map[string]any{}
		for _, s := range c.Objects(serviceGVR) {
			ing, _, _ := unstructured.NestedSlice(s.Object, "status", "loadBalancer", "ingress")
			if len(ing) > 0 {
				out[s.GetName()] = ing[0].(map[string]any)["ip"]
			}
		}
		return out
	}
	require.Equal(t, map[string]any{"a": "203.0.113.1", "c": "203.0.113.2"}, ips(), "d waits: the pool is exhausted")

	// Changing a's type releases its IP, which d then gets.
	a, err := c.Get(ctx, serviceGVR, "prod", "a")
	require.NoError(t, err)
	_ = unstructured.SetNestedField(a.Object, "ClusterIP", "spec", "type")
	_, err = c.Update(ctx, serviceGVR, a)
	require.NoError(t, err)
	c.Tick()
	c.Tick()
	require.Equal(t, map[string]any{"c": "203.0.113.2", "d": "203.0.113.1"}, ips())
}

func TestFleetDefaultPoolsAreDistinct(t *testing.T) {
	f := fake.NewFleet()
	f.SetWorkloads(fake.Workloads{LoadBalancers: true})
	a, b := withNamespaces(t, f.Add("a", nil)), withNamespaces(t, f.Add("b", nil))
	mustCreate(t, a, serviceGVR, service("prod", "lb", "LoadBalancer"))
	mustCreate(t, b, serviceGVR, service("prod", "lb", "LoadBalancer"))
	f.Tick()
	ip := func(c *fake.Cluster) any {
		s, err := c.Peek(serviceGVR, "prod", "lb")
		require.NoError(t, err)
		return nested(t, s, "status", "loadBalancer", "ingress").([]any)[0].(map[string]any)["ip"]
	}
	require.Equal(t, "198.18.1.1", ip(a))
	require.Equal(t, "198.18.2.1", ip(b))
}

func TestRunTicksOnTheClock(t *testing.T) {
	c, clk := newSimCluster(t, fake.Workloads{Apps: true, Interval: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.Watch(ctx, deployGVR, "prod", metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()

	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	require.Eventually(t, clk.HasWaiters, time.Second, time.Millisecond, "Run waits on its ticker")
	mustCreate(t, c, deployGVR, deployment("prod", "web", 2))
	require.Equal(t, watch.Added, nextEvent(t, w).Type)
	clk.Step(5 * time.Second)
	ev := nextEvent(t, w)
	require.Equal(t, watch.Modified, ev.Type, "the next tick writes status")
	require.Equal(t, int64(2), nested(t, ev.Object.(*unstructured.Unstructured), "status", "readyReplicas"))

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Second):
		t.Fatal("Run did not return after ctx was cancelled")
	}
}

func TestFleetRun(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	f := fake.NewFleet()
	f.SetClock(clk)
	f.SetWorkloads(fake.Workloads{Apps: true})
	eu := withNamespaces(t, f.Add("eu", nil))
	mustCreate(t, eu, deployGVR, deployment("prod", "web", 1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	require.Eventually(t, func() bool {
		u, err := eu.Peek(deployGVR, "prod", "web")
		if err != nil {
			return false
		}
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		return ready == 1
	}, time.Second, time.Millisecond, "Run ticks once at start")
	cancel()
	require.NoError(t, <-done)
}
