package status_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// The Collector on an in-memory fleet: one pass reads the member Deployments of the clusters
// status.clusters lists and writes their counts, the sums and the Ready condition. When a
// cluster is cut off (the cluster monitor marks it not Ready), its entry goes stale and out
// of the sum; two of three clusters are still a majority, so the aggregate stays published.
func ExampleCollector_Reconcile() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.SetClock(clk)
	fleet.SetWorkloads(fake.Workloads{Apps: true}) // Deployments report the status they ask for
	for _, name := range []string{"eu", "us", "ap"} {
		fleet.Add(name, nil)
	}
	_ = fleet.Register(ctx, host) // Cluster objects with Ready conditions

	// A FederatedDeployment whose generation 1 sync has propagated at revision 1 (its
	// status.clusters, observedGeneration, syncedRevision and Propagated condition), and its
	// member objects.
	_ = host.Seed(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "types.federation.k8s.io/v1alpha1", "kind": "FederatedDeployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "generation": int64(1)},
		"status": map[string]any{"clusters": []any{
			map[string]any{"name": "eu", "revision": int64(1)}, map[string]any{"name": "us", "revision": int64(1)},
			map[string]any{"name": "ap", "revision": int64(1)}},
			"observedGeneration": int64(1), "syncedRevision": int64(1),
			"conditions": []any{map[string]any{"type": "Propagated", "status": "True", "reason": "Propagated",
				"observedGeneration": int64(1), "lastTransitionTime": "2026-11-30T12:00:00Z"}}},
	}})
	for i, name := range []string{"eu", "us", "ap"} {
		m, _ := fleet.Member(name)
		_ = m.Seed(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{
				federation.ManagedByLabel: federation.ManagedByValue},
				"annotations": map[string]any{federation.RevisionAnnotation: "1"}},
			"spec": map[string]any{"replicas": int64(i + 1)},
		}})
	}
	fleet.Tick()

	c, _ := status.New(host, fleet, federation.DeploymentType, status.Options{Clock: clk})
	key := federation.Key{Namespace: "default", Name: "web"}
	show := func() {
		res, err := c.Reconcile(ctx, key)
		u, _ := host.Get(ctx, federation.DeploymentType.FederatedGVR(), "default", "web")
		fed, _ := federation.FederatedObjectFromUnstructured(u)
		var stale []string
		for _, e := range fed.Status.Clusters {
			if e.Stale {
				stale = append(stale, e.Name)
			}
		}
		ready := meta.FindStatusCondition(fed.Status.Conditions, federation.ConditionReady)
		fmt.Printf("ready replicas %d from %d clusters, stale %v; Ready=%s %s (next pull in %s, error %v)\n",
			fed.Status.Aggregated.ReadyReplicas, fed.Status.Aggregated.Clusters, stale, ready.Status, ready.Reason, res.RequeueAfter, err)
	}
	show()

	_ = fleet.Partition("ap")
	_ = fleet.Register(ctx, host) // as the cluster monitor would: ap's Ready turns False
	clk.Step(30 * time.Second)
	show()
	// Output:
	// ready replicas 6 from 3 clusters, stale []; Ready=True Ready (next pull in 30s, error <nil>)
	// ready replicas 3 from 2 clusters, stale [ap]; Ready=False StaleClusters (next pull in 30s, error <nil>)
}

// The ClusterMonitor probes a member every period; one failure does not flip it, the third in
// a row does, and the taints that keep new work away come with it.
func ExampleClusterMonitor_Reconcile() {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.SetClock(clk)
	fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1", federation.ZoneLabel: "europe-west1-b"})
	_ = fleet.Register(ctx, host)

	m, _ := status.NewClusterMonitor(host, fleet, status.MonitorOptions{Clock: clk})
	show := func(when string) {
		res, _ := m.Reconcile(ctx, federation.Key{Name: "eu"})
		u, _ := host.Get(ctx, federation.ClusterGVR, "", "eu")
		c, _ := federation.ClusterFromUnstructured(u)
		var conds, taints []string
		for _, cond := range c.Status.Conditions {
			conds = append(conds, cond.Type+"="+string(cond.Status))
		}
		for _, t := range c.Spec.Taints {
			taints = append(taints, t.Key+":"+string(t.Effect))
		}
		fmt.Printf("%s: %s; cpu %s, available %s; taints %v; next probe in %s\n", when, strings.Join(conds, " "),
			c.Status.Capacity.Cpu(), c.Status.Available.Cpu(), taints, res.RequeueAfter)
	}
	show("healthy")
	_ = fleet.Partition("eu")
	for i := 1; i <= 3; i++ {
		clk.Step(10 * time.Second)
		show(fmt.Sprintf("failure %d", i))
	}
	// Output:
	// healthy: Ready=True Offline=False; cpu 8, available 8; taints []; next probe in 10s
	// failure 1: Ready=True Offline=False; cpu 8, available 8; taints []; next probe in 10s
	// failure 2: Ready=True Offline=False; cpu 8, available 8; taints []; next probe in 10s
	// failure 3: Ready=False Offline=True Failover=True; cpu 8, available 8; taints [federation.k8s.io/not-ready:NoSchedule federation.k8s.io/unreachable:NoSchedule]; next probe in 10s
}

// Extractors teach the Collector a kind: here a custom resource whose status reports
// "instances" and a "phase".
func ExampleExtractors() {
	widgets := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	opts := status.Options{Extractors: status.Extractors{
		widgets: func(obj *unstructured.Unstructured) (status.Observation, error) {
			n, _, err := unstructured.NestedInt64(obj.Object, "status", "instances")
			if err != nil {
				return status.Observation{}, fmt.Errorf("%w: status.instances: %v", status.ErrInvalidMemberStatus, err)
			}
			phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
			o := status.Observation{Replicas: &n, ReadyReplicas: &n, Ready: phase == "Running"}
			if !o.Ready {
				o.Message = "phase " + phase
			}
			return o, nil
		},
	}}
	// status.New(host, clusters, federation.NewTypeConfig(widgets.WithVersion("v1"), "widgets", true, "spec.instances"), opts)

	o, err := opts.Extractors[widgets](&unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"instances": int64(3), "phase": "Provisioning"},
	}})
	fmt.Println(*o.Replicas, o.Ready, o.Message, err)
	// Output:
	// 3 false phase Provisioning <nil>
}
