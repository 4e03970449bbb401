package controlplane_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// A whole federation on the fake fleet: one New, one Run. A FederatedDeployment and its
// ReplicaSchedulingPreference go in; the scheduler divides 6 replicas 2:1, sync creates the
// member Deployments, the fleet's simulated controllers make them ready and the collector
// reports the object Ready.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.SetWorkloads(fake.Workloads{Apps: true, Interval: 10 * time.Millisecond})
	fleet.Add("eu", nil)
	fleet.Add("us", nil)
	if err := fleet.Register(ctx, host); err != nil {
		fmt.Println(err)
		return
	}

	cp, err := controlplane.New(host, fleet, controlplane.Options{
		Types:   []federation.TypeConfig{federation.DeploymentType},
		Disable: controlplane.Parts{DNS: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- cp.Run(ctx) }()

	for gvr, doc := range map[schema.GroupVersionResource]string{
		federation.DeploymentType.FederatedGVR(): `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27"}]}
  placement: {clusterSelector: {}}`,
		federation.ReplicaSchedulingPreferenceGVR: `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 6
  clusters: {eu: {weight: 2}, us: {weight: 1}}`,
	} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			fmt.Println(err)
			return
		}
		if _, err := host.Create(ctx, gvr, u); err != nil {
			fmt.Println(err)
			return
		}
	}

	// Ready, with the 6 replicas of the preference: the loops act concurrently, so the object
	// can be Ready for a moment with the template's replicas, before the schedule reaches sync.
	ready := func() bool {
		u, err := host.Get(ctx, federation.DeploymentType.FederatedGVR(), "default", "web")
		if err != nil {
			return false
		}
		obj, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil || obj.Status.Aggregated == nil || obj.Status.Aggregated.ReadyReplicas != 6 {
			return false
		}
		for _, c := range obj.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return true
			}
		}
		return false
	}
	if !waitFor(ready) {
		fmt.Println("not Ready with 6 replicas after a minute")
		return
	}
	for _, name := range fleet.Names() {
		m, _ := fleet.Member(name)
		d, _ := m.Peek(federation.DeploymentType.TargetGVR(), "default", "web")
		replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		fmt.Printf("%s: %d replicas\n", name, replicas)
	}
	fmt.Println("default/web is Ready: 6 ready replicas")
	for _, l := range cp.Status() {
		fmt.Println(l.Name, l.State)
	}

	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// eu: 4 replicas
	// us: 2 replicas
	// default/web is Ready: 6 ready replicas
	// cluster-set Running
	// cluster-monitor Running
	// scheduler/FederatedDeployment Running
	// sync/FederatedDeployment Running
	// status/FederatedDeployment Running
	// propagation/FederatedDeployment Running
	// propagation/policies Running
	// autoscale Running
	// dependencies Running
	// Run returned <nil>
}

// waitFor polls cond for up to a minute: the loops work on Run's goroutines.
func waitFor(cond func() bool) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for range 12000 {
		if cond() {
			return true
		}
		<-tick.C
	}
	return false
}

// Two replicas of a control plane with leader election on the host: one runs the loops, the
// other stands by, and takes over when the leader crashes (its Run stops without releasing
// the Lease), LeaseDuration after the leader's last renewal.
func Example_leaderElection() {
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.Add("eu", nil)
	if err := fleet.Register(context.Background(), host); err != nil {
		fmt.Println(err)
		return
	}
	replica := func(name string) (*controlplane.ControlPlane, error) {
		return controlplane.New(host, fleet, controlplane.Options{
			Types:   []federation.TypeConfig{federation.DeploymentType},
			Disable: controlplane.Parts{DNS: true},
			LeaderElection: &controlplane.Lease{
				Namespace: "default", // default: fedkit-system
				Identity:  name,      // default: the host name (the pod's) and a random suffix
				// Short, for the example; the defaults are client-go's: 15s, 10s and 2s.
				LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond,
			},
		})
	}
	a, err := replica("a")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := replica("b")
	if err != nil {
		fmt.Println(err)
		return
	}
	sync := func(cp *controlplane.ControlPlane) controlplane.State {
		for _, l := range cp.Status() {
			if l.Name == "sync/FederatedDeployment" {
				return l.State
			}
		}
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	crashA, crash := context.WithCancel(ctx)
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go func() { doneA <- a.Run(crashA) }()
	waitFor(func() bool { return sync(a) == controlplane.StateRunning })
	go func() { doneB <- b.Run(ctx) }()
	waitFor(func() bool { return sync(b) == controlplane.StateStandby })
	fmt.Println("a:", sync(a), "b:", sync(b))

	crash()
	fmt.Println("a's Run returned", <-doneA)
	waitFor(func() bool { return sync(b) == controlplane.StateRunning })
	fmt.Println("a:", sync(a), "b:", sync(b))
	cancel()
	fmt.Println("b's Run returned", <-doneB)
	// Output:
	// a: Running b: Standby
	// a's Run returned <nil>
	// a: Stopped b: Running
	// b's Run returned <nil>
}
