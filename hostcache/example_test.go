package hostcache_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/scheduler"
	fedsync "github.com/fedkit/fedkit/sync"
)

// One Cache, two loops: the scheduler and the Syncer of FederatedDeployments read the host
// through the same informers. The Cache runs as long as the loops do; here on an in-memory
// fleet, until the member runs the scheduled Deployment.
func Example() {
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	eu := fleet.Add("eu", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
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
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "web:1"}]}
  placement: {clusters: [{name: eu}]}
`))
	c, err := hostcache.New(host, hostcache.Options{})
	must(err)
	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{Cache: c})
	must(err)
	y, err := fedsync.New(host, fleet, federation.DeploymentType, fedsync.Options{Cache: c, WaitForScheduler: true})
	must(err)
	go func() { _ = c.Run(ctx) }()
	go func() { _ = s.Run(ctx) }()
	go func() { _ = y.Run(ctx) }()

	deployments := federation.DeploymentType.TargetGVR()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		u, err := eu.Get(ctx, deployments, "shop", "web")
		if err != nil {
			continue
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		fmt.Println("eu runs web with", n, "replicas")
		break
	}
	list, err := eu.List(ctx, deployments, "shop", metav1.ListOptions{})
	must(err)
	fmt.Println("Deployments in eu:", len(list.Items))
	// Output:
	// eu runs web with 3 replicas
	// Deployments in eu: 1
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
