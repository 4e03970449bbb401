package autoscale_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// An Autoscaler on the fake fleet: one member runs the workload's two pods at 90% of a 60%
// cpu target; one pass writes the fleet's new total, which the scheduler then divides.
func ExampleAutoscaler_Reconcile() {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(now)
	host, fleet := fake.NewHost("host"), fake.NewFleet()
	host.SetClock(clk)
	fleet.SetClock(clk)
	eu := fleet.Add("eu", nil)
	if err := fleet.Register(ctx, host); err != nil {
		panic(err)
	}
	must(host.Apply(`
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template: {spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx}]}}}}
  placement: {clusters: [{name: eu}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 2
  clusters: {"*": {weight: 1}}
  autoscale:
    maxReplicas: 10
    metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
`))
	// What sync and the member's controllers would have made of the first schedule.
	must(eu.Apply(`
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {replicas: 2, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: nginx}]}}}
status: {replicas: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: shop, labels: {app: web}}
spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: "1"}}}]}
status: {phase: Running, startTime: "2026-12-01T08:00:00Z", conditions: [{type: Ready, status: "True", lastTransitionTime: "2026-12-01T08:00:00Z"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, namespace: shop, labels: {app: web}}
spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: "1"}}}]}
status: {phase: Running, startTime: "2026-12-01T08:00:00Z", conditions: [{type: Ready, status: "True", lastTransitionTime: "2026-12-01T08:00:00Z"}]}
`))
	for _, pod := range []string{"web-1", "web-2"} {
		eu.SetPodMetrics("shop", pod, fake.PodMetricsPoint{At: now, Containers: map[string]corev1.ResourceList{"app": {corev1.ResourceCPU: resource.MustParse("900m")}}})
	}
	key := federation.Key{Namespace: "shop", Name: "web"}
	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{Clock: clk})
	must(err)
	_, err = s.Reconcile(ctx, key)
	must(err)

	a, err := autoscale.New(host, fleet, autoscale.Options{Clock: clk})
	must(err)
	_, err = a.Reconcile(ctx, key)
	must(err)
	u, err := host.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, "shop", "web")
	must(err)
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	must(err)
	fmt.Println("total:", federation.FleetTotal(rsp))
	for _, c := range rsp.Status.Autoscale.Conditions {
		if c.Type == federation.ConditionScalingActive {
			fmt.Println(c.Type, c.Status+":", c.Message)
		}
	}
	// Output:
	// total: 3
	// ScalingActive True: cpu 90% of 60% over 2 ready pods in 1 of 1 cluster
}

// SplitBounds divides the fleet's bounds among the members of Distributed mode, with the
// preference's weights: eu weighs twice as much.
func ExampleSplitBounds() {
	split, err := autoscale.SplitBounds(autoscale.SplitInput{
		Key: "shop/web", Min: 4, Max: 40, Clusters: []string{"eu", "us", "ap"},
		Preferences: map[string]federation.ClusterPreferences{"*": {Weight: 1}, "eu": {Weight: 2}},
	})
	must(err)
	for _, b := range split.Clusters {
		fmt.Printf("%s: minReplicas %d, maxReplicas %d\n", b.Cluster, b.Min, b.Max)
	}
	// Output:
	// eu: minReplicas 2, maxReplicas 20
	// us: minReplicas 1, maxReplicas 10
	// ap: minReplicas 1, maxReplicas 10
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
