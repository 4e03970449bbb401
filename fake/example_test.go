package fake_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// A standalone cluster with API-server semantics. Like a new real cluster it holds the
// namespaces default, kube-system, kube-public and kube-node-lease (resourceVersions 1 to 4).
func ExampleNewCluster() {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	host := fake.NewCluster("host")

	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": "settings"},
		"data":     map[string]any{"color": "blue"},
	}}
	created, err := host.Create(ctx, gvr, cm)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created at resourceVersion", created.GetResourceVersion())

	// Someone else changes it first...
	_ = host.Drift(gvr, "default", "settings", func(u *unstructured.Unstructured) {
		u.Object["data"] = map[string]any{"color": "red"}
	})
	// ...so an update from the stale copy conflicts, as on a real server.
	created.Object["data"] = map[string]any{"color": "green"}
	_, err = host.Update(ctx, gvr, created)
	fmt.Println("conflict:", apierrors.IsConflict(err))

	for _, a := range host.Actions() {
		fmt.Println("action:", a)
	}
	// Output:
	// created at resourceVersion 5
	// conflict: true
	// action: create v1/configmaps default/settings
	// action: update v1/configmaps default/settings
}

// A fleet of member clusters is a federation.ClusterSet and describes its members as Cluster
// objects for placement.
func ExampleNewFleet() {
	fleet := fake.NewFleet()
	fleet.Add("aws-us-east", map[string]string{federation.RegionLabel: "us-east-1", federation.ZoneLabel: "us-east-1a"})
	fleet.Add("gcp-eu-west", map[string]string{federation.RegionLabel: "europe-west1"})

	var clusters federation.ClusterSet = fleet
	if _, err := clusters.Client("aws-us-east"); err == nil {
		fmt.Println("aws-us-east: client ok")
	}
	_, err := clusters.Client("azure")
	fmt.Println("azure: not found:", errors.Is(err, federation.ErrClusterNotFound))

	for _, c := range fleet.Clusters() {
		fmt.Printf("%s region=%s zones=%v ready=%s\n", c.Name, c.Spec.Region, c.Spec.Zones, c.Status.Conditions[0].Status)
	}
	// Output:
	// aws-us-east: client ok
	// azure: not found: true
	// aws-us-east region=us-east-1 zones=[us-east-1a] ready=True
	// gcp-eu-west region=europe-west1 zones=[] ready=True
}

// A partitioned member fails every call as unreachable until it is healed.
func ExampleFleet_Partition() {
	ctx := context.Background()
	fleet := fake.NewFleet()
	eu := fleet.Add("eu", nil)

	_ = fleet.Partition("eu")
	err := eu.Healthy(ctx)
	fmt.Println("unreachable:", errors.Is(err, federation.ErrUnreachable))
	fmt.Println("ready:", fleet.Clusters()[0].Status.Conditions[0].Status)

	_ = fleet.Heal("eu")
	fmt.Println("healthy again:", eu.Healthy(ctx) == nil)
	// Output:
	// unreachable: true
	// ready: False
	// healthy again: true
}

// Injected errors: the next two updates fail, then calls go through again.
func ExampleCluster_FailOn() {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	c := fake.NewCluster("member")
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": "settings"},
	}}
	if _, err := c.Create(ctx, gvr, cm); err != nil {
		fmt.Println(err)
		return
	}

	c.FailOn(fake.VerbUpdate, apierrors.NewServiceUnavailable("etcd is busy"), 2)
	for i := 1; i <= 3; i++ {
		_, err := c.Update(ctx, gvr, cm)
		fmt.Printf("update %d: %v\n", i, err)
	}
	// Output:
	// update 1: etcd is busy
	// update 2: etcd is busy
	// update 3: <nil>
}

// A simulated Deployment controller: status follows spec after ReadyAfter on the injected
// clock, within the cluster's pod capacity.
func ExampleWorkloads() {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))

	c := fake.NewCluster("member")
	c.SetClock(clk)
	c.SetWorkloads(fake.Workloads{Apps: true, ReadyAfter: 30 * time.Second, PodCapacity: 4})

	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "default", "name": "web"},
		"spec":     map[string]any{"replicas": int64(6)},
	}}
	if _, err := c.Create(ctx, gvr, deploy); err != nil {
		fmt.Println(err)
		return
	}

	report := func() {
		d, _ := c.Get(ctx, gvr, "default", "web")
		ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		observed, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
		fmt.Printf("t=%v observedGeneration=%d readyReplicas=%d\n", clk.Since(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), observed, ready)
	}
	c.Tick()
	report()
	clk.Step(30 * time.Second)
	c.Tick()
	report() // only 4 of 6 pods fit

	// Scale down to what fits.
	_ = c.Drift(gvr, "default", "web", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "replicas")
	})
	c.Tick()
	clk.Step(30 * time.Second)
	c.Tick()
	report()
	// Output:
	// t=0s observedGeneration=0 readyReplicas=0
	// t=30s observedGeneration=1 readyReplicas=4
	// t=1m0s observedGeneration=2 readyReplicas=4
}

// A watch resumes from a resourceVersion, replaying what happened since.
func ExampleCluster_Watch() {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	c := fake.NewCluster("member")
	for _, name := range []string{"a", "b"} { // resourceVersions 5 and 6
		_, _ = c.Create(ctx, gvr, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "default", "name": name},
		}})
	}
	_ = c.Delete(ctx, gvr, "default", "a", metav1.DeleteOptions{})

	w, err := c.Watch(ctx, gvr, "default", metav1.ListOptions{ResourceVersion: "5"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Stop()
	for range 2 {
		ev := <-w.ResultChan()
		obj := ev.Object.(*unstructured.Unstructured)
		fmt.Println(ev.Type, obj.GetName(), obj.GetResourceVersion())
	}
	// Output:
	// ADDED b 6
	// DELETED a 7
}
