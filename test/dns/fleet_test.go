package dns_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

var (
	crdGVR            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaceGVR      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// The names of the record web in namespace default, domainRef fed, domain example.com.
const (
	global  = "web.default.fed.svc.example.com"
	usEast  = "web.default.fed.svc.us-east-1.example.com"
	usEast1 = "web.default.fed.svc.us-east-1a.us-east-1.example.com"
	europe  = "web.default.fed.svc.europe-west1.example.com"
	europeB = "web.default.fed.svc.europe-west1-b.europe-west1.example.com"
	prefix  = "shop.example.com"
)

// hostObjects are what the DNS controller reads on the host, besides Clusters: the Domain,
// the FederatedService and the ServiceDNSRecord of web.
var hostObjects = []struct {
	gvr schema.GroupVersionResource
	doc string
}{
	{namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`},
	{dnsrecord.DomainGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: Domain,
	  metadata: {name: fed, namespace: fedkit-system}, domain: example.com}`},
	{federation.ServiceType.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedService,
	  metadata: {name: web, namespace: default}, spec: {template: {spec: {type: LoadBalancer, ports: [{port: 80}]}}, placement: {clusterSelector: {}}}}`},
	{dnsrecord.ServiceDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: ServiceDNSRecord,
	  metadata: {name: web, namespace: default}, spec: {domainRef: fed, dnsPrefix: shop, recordTTL: 30}}`},
}

// memberObjects are the Service sync propagates (labelled as managed) and the EndpointSlice
// of its ready pod.
var memberObjects = []struct {
	gvr schema.GroupVersionResource
	doc string
}{
	{servicesGVR, fmt.Sprintf(`{apiVersion: v1, kind: Service, metadata: {name: web, namespace: default, labels: {%q: fedkit}},
	  spec: {type: LoadBalancer, ports: [{port: 80}], selector: {app: web}}}`, federation.ManagedByLabel)},
	{endpointSlicesGVR, `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice,
	  metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}},
	  addressType: IPv4, endpoints: [{addresses: [10.1.0.1], conditions: {ready: true}}]}`},
}

func decodeYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

// hostCRDs are the DNS CRDs, which a host has besides fedkit's own (fake.NewHost).
func hostCRDs(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	dns, err := dnsrecord.CRDs()
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, crd := range dns {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		require.NoError(t, err)
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// TestFleetDNS runs the DNS controller on the in-memory fleet and asks a real resolver for
// the names it publishes, as one cluster after the other fails and then recovers.
func TestFleetDNS(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	for _, crd := range hostCRDs(t) {
		_, err := host.Create(ctx, crdGVR, crd)
		require.NoError(t, err)
	}
	for _, o := range hostObjects {
		_, err := host.Create(ctx, o.gvr, decodeYAML(t, o.doc))
		require.NoError(t, err)
	}
	fleet := fake.NewFleet()
	fleet.SetWorkloads(fake.Workloads{LoadBalancers: true})
	for _, m := range []struct{ name, region, zone string }{
		{"east-a", "us-east-1", "us-east-1a"}, {"east-b", "us-east-1", "us-east-1b"}, {"eu", "europe-west1", "europe-west1-b"},
	} {
		member := fleet.Add(m.name, map[string]string{federation.RegionLabel: m.region, federation.ZoneLabel: m.zone})
		for _, o := range memberObjects {
			_, err := member.Create(ctx, o.gvr, decodeYAML(t, o.doc))
			require.NoError(t, err)
		}
	}
	fleet.Tick() // load balancers 198.18.1.1 (east-a), 198.18.2.1 (east-b), 198.18.3.1 (eu)
	c, err := dnsrecord.New(host, fleet, dnsrecord.Options{})
	require.NoError(t, err)
	zone := serveZone(t)

	publish := func() {
		t.Helper()
		require.NoError(t, fleet.Register(ctx, host))
		_, err := c.Reconcile(ctx, federation.Key{Namespace: "default", Name: "web"})
		require.NoError(t, err)
		u, err := host.Get(ctx, dnsrecord.DNSEndpointGVR, "default", "service-web")
		require.NoError(t, err)
		zone.set(t, decodeDNSEndpoint(t, u).Spec.Endpoints)
	}
	expect := func(step string, want map[string]string) {
		t.Helper()
		for name, answer := range want {
			require.Equal(t, answer, zone.lookup(t, name), "%s: %s", step, name)
		}
	}

	publish()
	expect("every cluster up", map[string]string{
		global:  global + " -> 198.18.1.1,198.18.2.1,198.18.3.1",
		usEast:  usEast + " -> 198.18.1.1,198.18.2.1",
		usEast1: usEast1 + " -> 198.18.1.1",
		europe:  europe + " -> 198.18.3.1",
		europeB: europeB + " -> 198.18.3.1",
		prefix:  global + " -> 198.18.1.1,198.18.2.1,198.18.3.1",
	})

	require.NoError(t, fleet.Partition("east-a"))
	publish()
	expect("east-a down: its zone is a CNAME to the region", map[string]string{
		usEast1: usEast + " -> 198.18.2.1",
		global:  global + " -> 198.18.2.1,198.18.3.1",
	})

	require.NoError(t, fleet.Partition("east-b"))
	publish()
	expect("us-east-1 down: the zone and the region fall back to the world", map[string]string{
		usEast1: global + " -> 198.18.3.1",
		usEast:  global + " -> 198.18.3.1",
		prefix:  global + " -> 198.18.3.1",
	})

	require.NoError(t, fleet.Partition("eu"))
	publish()
	expect("every cluster down: nothing answers", map[string]string{global: "NXDOMAIN", usEast1: "NXDOMAIN", prefix: "NXDOMAIN"})

	for _, m := range fleet.Names() {
		require.NoError(t, fleet.Heal(m))
	}
	publish()
	expect("recovered", map[string]string{
		usEast1: usEast1 + " -> 198.18.1.1",
		global:  global + " -> 198.18.1.1,198.18.2.1,198.18.3.1",
	})
}
