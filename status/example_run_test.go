package status_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// waitFor reads w until match returns a line to print, or a minute passes (a guard: the
// loops act in milliseconds).
func waitFor(w watch.Interface, match func(*unstructured.Unstructured) string) string {
	timeout := time.After(time.Minute)
	for {
		select {
		case ev := <-w.ResultChan():
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				if line := match(u); line != "" {
					return line
				}
			}
		case <-timeout:
			return "nothing after a minute"
		}
	}
}

// Run collects every federated object of its type when it appears, when a member's copy
// changes (the member caches report it) and every Period. Here a watch on the host waits for
// the aggregate Run writes; cancelling the context stops Run.
func ExampleCollector_Run() {
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.SetWorkloads(fake.Workloads{Apps: true}) // Deployments report the status they ask for
	for _, name := range []string{"eu", "us"} {
		fleet.Add(name, nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_ = fleet.Register(ctx, host)
	// The member Deployments sync created, and the entries it listed in status.clusters.
	for i, name := range []string{"eu", "us"} {
		m, _ := fleet.Member(name)
		_ = m.Apply(fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: default,
		  labels: {%s: %s}}, spec: {replicas: %d}}`, federation.ManagedByLabel, federation.ManagedByValue, i+2))
	}
	fleet.Tick()
	_ = host.Apply(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment, metadata: {name: web, namespace: default},
	  spec: {template: {}}, status: {clusters: [{name: eu}, {name: us}]}}`)

	c, _ := status.New(host, fleet, federation.DeploymentType, status.Options{})
	w, _ := host.Watch(ctx, federation.DeploymentType.FederatedGVR(), "default", metav1.ListOptions{})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	fmt.Println(waitFor(w, func(u *unstructured.Unstructured) string {
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil || fed.Status.Aggregated == nil {
			return ""
		}
		return fmt.Sprintf("ready replicas %d from %d clusters", fed.Status.Aggregated.ReadyReplicas, fed.Status.Aggregated.Clusters)
	}))
	w.Stop()
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// ready replicas 5 from 2 clusters
	// Run returned: <nil>
}

// Run probes every Cluster when it appears and then every Period, and writes what it finds
// into the Cluster's status. Here a Cluster joins without a status; the monitor's first probe
// marks it Ready and reports its capacity.
func ExampleClusterMonitor_Run() {
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1", federation.ZoneLabel: "europe-west1-b"})
	ctx, cancel := context.WithCancel(context.Background())
	m, _ := status.NewClusterMonitor(host, fleet, status.MonitorOptions{})
	w, _ := host.Watch(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	_ = host.Apply(`{apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: eu}, spec: {apiEndpoint: "https://eu.example"}}`)
	fmt.Println(waitFor(w, func(u *unstructured.Unstructured) string {
		c, err := federation.ClusterFromUnstructured(u)
		if err != nil || len(c.Status.Conditions) == 0 {
			return ""
		}
		var conds []string
		for _, cond := range c.Status.Conditions {
			conds = append(conds, cond.Type+"="+string(cond.Status))
		}
		return fmt.Sprintf("%s: %s; region %s; cpu %s", c.Name, strings.Join(conds, " "), c.Status.Region, c.Status.Capacity.Cpu())
	}))
	w.Stop()
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// eu: Ready=True Offline=False; region europe-west1; cpu 8
	// Run returned: <nil>
}
