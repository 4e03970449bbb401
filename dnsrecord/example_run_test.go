package dnsrecord_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// Run watches the DNS records, the Domains, the Clusters and the members' Services, and
// publishes each record's names when any of them changes. Here a watch on the host waits for
// the DNSEndpoint Run writes once the member's load balancer has an address; cancelling the
// context stops Run.
func ExampleController_Run() {
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.SetWorkloads(fake.Workloads{LoadBalancers: true}) // Services of type LoadBalancer get an IP
	fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1", federation.ZoneLabel: "europe-west1-b"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = fleet.Register(ctx, host)
	dnsCRDs, _ := dnsrecord.CRDs()
	for _, crd := range dnsCRDs {
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		create(ctx, host, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, m)
	}
	err := host.Apply(`
apiVersion: v1
kind: Namespace
metadata: {name: fedkit-system}
---
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: Domain
metadata: {name: fed, namespace: fedkit-system}
domain: example.com
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedService
metadata: {name: web, namespace: default}
spec: {template: {spec: {type: LoadBalancer}}, placement: {clusterSelector: {}}}
---
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: ServiceDNSRecord
metadata: {name: web, namespace: default}
spec: {domainRef: fed, allowServiceWithoutEndpoints: true} # no pods in this fleet: publish the load balancer anyway
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	// sync propagates the Service, and the member's cloud gives it an address.
	eu, _ := fleet.Member("eu")
	_ = eu.Apply(`{apiVersion: v1, kind: Service, metadata: {name: web, namespace: default,
	  labels: {federation.k8s.io/managed-by: fedkit}}, spec: {type: LoadBalancer}}`)
	fleet.Tick()

	c, err := dnsrecord.New(host, fleet, dnsrecord.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := host.Watch(ctx, dnsrecord.DNSEndpointGVR, "default", metav1.ListOptions{})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	timeout := time.After(time.Minute) // a guard: Run acts in milliseconds
	for published := false; !published; {
		select {
		case ev := <-w.ResultChan():
			var de dnsrecord.DNSEndpoint
			if err := federation.FromUnstructured(ev.Object.(*unstructured.Unstructured), &de); err != nil {
				continue
			}
			for _, e := range de.Spec.Endpoints {
				if e.RecordType == "A" {
					published = true
				}
			}
			if published {
				for _, e := range de.Spec.Endpoints {
					fmt.Printf("%-59s %-5s %s\n", e.DNSName, e.RecordType, strings.Join(e.Targets, ","))
				}
			}
		case <-timeout:
			fmt.Println("nothing published after a minute")
			published = true
		}
	}
	w.Stop()
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// web.default.fed.svc.europe-west1-b.europe-west1.example.com A     198.18.1.1
	// web.default.fed.svc.europe-west1.example.com                A     198.18.1.1
	// web.default.fed.svc.example.com                             A     198.18.1.1
	// Run returned: <nil>
}
