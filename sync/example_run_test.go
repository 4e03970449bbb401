package sync_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// Run watches the federated objects and the members' copies, and syncs every object that
// changes, here on an in-memory fleet. A watch on the member waits for the Deployment Run
// creates there; a change made behind the federation's back is reverted at once (the member
// cache reports it); cancelling the context stops Run.
func ExampleSyncer_Run() {
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	eu := fleet.Add("eu", nil)
	ctx, cancel := context.WithCancel(context.Background())
	must(fleet.Register(ctx, host))
	must(host.Apply(`
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "web:1"}]}
  placement: {clusters: [{name: eu}]}
`))
	s, err := fedsync.New(host, fleet, federation.DeploymentType, fedsync.Options{})
	must(err)
	deployments := federation.DeploymentType.TargetGVR()
	w, err := eu.Watch(ctx, deployments, "shop", metav1.ListOptions{})
	must(err)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	// next returns the replicas of the member Deployment at its next event.
	next := func() any {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Error {
				return ev.Object
			}
			n, _, _ := unstructured.NestedInt64(ev.Object.(*unstructured.Unstructured).Object, "spec", "replicas")
			return fmt.Sprintf("%s with %d replicas", ev.Type, n)
		case <-time.After(time.Minute): // a guard: Run acts in milliseconds
			return "nothing after a minute"
		}
	}
	fmt.Println("eu:", next())
	must(eu.Drift(deployments, "shop", "web", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
	}))
	fmt.Println("eu, someone scales it:", next())
	fmt.Println("eu, Run reverts it:", next())

	w.Stop()
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// eu: ADDED with 2 replicas
	// eu, someone scales it: MODIFIED with 5 replicas
	// eu, Run reverts it: MODIFIED with 2 replicas
	// Run returned: <nil>
}
