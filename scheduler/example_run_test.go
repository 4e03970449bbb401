package scheduler_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// Run is the loop an embedder starts (directly, or as a controller-runtime Runnable): it
// watches the federated objects, their preferences and the Clusters, and schedules each object
// that changes. Here a watch on the host waits for the schedule it writes; cancelling the
// context stops Run, which returns once its goroutines have exited.
func ExampleScheduler_Run() {
	host := fake.NewHost("host")
	err := host.Apply(`
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: eu}
spec: {apiEndpoint: "https://eu.example"}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: us}
spec: {apiEndpoint: "https://us.example"}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec: {template: {spec: {replicas: 4}}, placement: {clusterSelector: {}}}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec: {targetKind: FederatedDeployment, totalReplicas: 6, clusters: {eu: {weight: 2}, us: {weight: 1}}}
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := host.Watch(ctx, federation.DeploymentType.FederatedGVR(), "shop", metav1.ListOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	timeout := time.After(time.Minute) // a guard: the schedule comes in milliseconds
	for scheduled := false; !scheduled; {
		select {
		case ev := <-w.ResultChan():
			obj, err := federation.FederatedObjectFromUnstructured(ev.Object.(*unstructured.Unstructured))
			if err == nil && obj.Status.Schedule != nil {
				fmt.Println("schedule:", obj.Status.Schedule.Replicas())
				scheduled = true
			}
		case <-timeout:
			fmt.Println("no schedule after a minute")
			scheduled = true
		}
	}
	w.Stop()
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// schedule: map[eu:4 us:2]
	// Run returned: <nil>
}
