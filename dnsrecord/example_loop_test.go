package dnsrecord_test

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// The DNS loop on an in-memory fleet: one Reconcile pass publishes a federated Service's
// global, region and zone names in the DNSEndpoint service-web; when a cluster stops being
// Ready its zone falls back to its region.
func ExampleController_Reconcile() {
	ctx := context.Background()
	host := fake.NewHost("host") // serves fedkit's CRDs: Cluster, FederatedService, ...
	fleet := fake.NewFleet()
	fleet.SetWorkloads(fake.Workloads{LoadBalancers: true}) // Services of type LoadBalancer get an IP
	for _, m := range []struct{ name, zone string }{{"us-a", "us-east-1a"}, {"us-b", "us-east-1b"}} {
		fleet.Add(m.name, map[string]string{federation.RegionLabel: "us-east-1", federation.ZoneLabel: m.zone})
	}

	// The DNS CRDs are installed; an administrator created the Domain, the user a
	// FederatedService and its ServiceDNSRecord; sync propagated the Service.
	dnsCRDs, _ := dnsrecord.CRDs()
	for _, crd := range dnsCRDs {
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		create(ctx, host, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, m)
	}
	create(ctx, host, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`)
	create(ctx, host, dnsrecord.DomainGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: Domain,
	  metadata: {name: fed, namespace: fedkit-system}, domain: example.com}`)
	create(ctx, host, federation.ServiceType.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedService,
	  metadata: {name: web, namespace: default}, spec: {template: {spec: {type: LoadBalancer}}, placement: {clusterSelector: {}}}}`)
	create(ctx, host, dnsrecord.ServiceDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: ServiceDNSRecord,
	  metadata: {name: web, namespace: default}, spec: {domainRef: fed, allowServiceWithoutEndpoints: true}}`)
	for _, name := range fleet.Names() {
		member, _ := fleet.Member(name)
		create(ctx, member, schema.GroupVersionResource{Version: "v1", Resource: "services"}, `{apiVersion: v1, kind: Service,
		  metadata: {name: web, namespace: default, labels: {federation.k8s.io/managed-by: fedkit}}, spec: {type: LoadBalancer}}`)
	}
	fleet.Tick() // the members' cloud assigns the load balancers

	c, err := dnsrecord.New(host, fleet, dnsrecord.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	show := func(when string) {
		_ = fleet.Register(ctx, host) // the Clusters and their Ready conditions, as the cluster monitor writes them
		if _, err := c.Reconcile(ctx, federation.Key{Namespace: "default", Name: "web"}); err != nil {
			fmt.Println(err)
			return
		}
		u, _ := host.Get(ctx, dnsrecord.DNSEndpointGVR, "default", "service-web")
		var de dnsrecord.DNSEndpoint
		_ = federation.FromUnstructured(u, &de)
		fmt.Println(when + ":")
		for _, e := range de.Spec.Endpoints {
			fmt.Printf("  %-52s %-5s %s\n", e.DNSName, e.RecordType, strings.Join(e.Targets, ","))
		}
	}
	show("both clusters up")
	_ = fleet.Partition("us-a")
	show("us-a down")
	// Output:
	// both clusters up:
	//   web.default.fed.svc.example.com                      A     198.18.1.1,198.18.2.1
	//   web.default.fed.svc.us-east-1.example.com            A     198.18.1.1,198.18.2.1
	//   web.default.fed.svc.us-east-1a.us-east-1.example.com A     198.18.1.1
	//   web.default.fed.svc.us-east-1b.us-east-1.example.com A     198.18.2.1
	// us-a down:
	//   web.default.fed.svc.example.com                      A     198.18.2.1
	//   web.default.fed.svc.us-east-1.example.com            A     198.18.2.1
	//   web.default.fed.svc.us-east-1a.us-east-1.example.com CNAME web.default.fed.svc.us-east-1.example.com
	//   web.default.fed.svc.us-east-1b.us-east-1.example.com A     198.18.2.1
}

// create creates an object given as YAML (or as a map) and reports a failure.
func create(ctx context.Context, c *fake.Cluster, gvr schema.GroupVersionResource, obj any) {
	u := &unstructured.Unstructured{}
	switch o := obj.(type) {
	case string:
		if err := yaml.Unmarshal([]byte(o), &u.Object); err != nil {
			fmt.Println(err)
			return
		}
	case map[string]any:
		u.Object = o
	}
	if _, err := c.Create(ctx, gvr, u); err != nil {
		fmt.Println(err)
	}
}
