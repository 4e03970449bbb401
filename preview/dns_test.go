package preview_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
)

const webService = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedService
metadata: {name: web, namespace: shop}
spec:
  template: {spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}}
  placement: {clusters: [{name: us}, {name: sa}]}
---
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: ServiceDNSRecord
metadata: {name: web, namespace: shop}
spec: {domainRef: fed, dnsPrefix: www}
---
apiVersion: multiclusterdns.federation.k8s.io/v1alpha1
kind: Domain
metadata: {name: fed, namespace: fedkit-system}
domain: example.com
`

// TestRunDNS: a ServiceDNSRecord's names come from the Domain and the ready clusters'
// regions and zones; with live Services, the records from their load balancers.
func TestRunDNS(t *testing.T) {
	in, err := preview.Decode([]byte(fleet + "\n---\n" + webService))
	require.NoError(t, err)
	rep, err := preview.Run(in)
	require.NoError(t, err)
	o := rep.Objects[0]
	require.Empty(t, o.Problems)
	require.Len(t, o.DNS, 1)
	require.Equal(t, []string{
		"web.shop.fed.svc.asia-east1.example.com",
		"web.shop.fed.svc.example.com",
		"web.shop.fed.svc.southamerica-east1.example.com",
		"web.shop.fed.svc.us-east-1.example.com",
		"web.shop.fed.svc.us-east-1a.us-east-1.example.com",
		"www.example.com",
	}, o.DNS[0].Names, "every ready cluster has names, as the DNS controller lists them")
	require.Nil(t, o.DNS[0].Endpoints)

	in.Live = map[string][]*unstructured.Unstructured{"us": {managedService("203.0.113.7")}}
	rep, err = preview.Run(in)
	require.NoError(t, err)
	var got []string
	for _, ep := range rep.Objects[0].DNS[0].Endpoints {
		got = append(got, ep.DNSName+" "+ep.RecordType+" "+ep.Targets[0])
	}
	require.Equal(t, []string{
		"web.shop.fed.svc.asia-east1.example.com CNAME web.shop.fed.svc.example.com",
		"web.shop.fed.svc.example.com A 203.0.113.7",
		"web.shop.fed.svc.southamerica-east1.example.com CNAME web.shop.fed.svc.example.com",
		"web.shop.fed.svc.us-east-1.example.com A 203.0.113.7",
		"web.shop.fed.svc.us-east-1a.us-east-1.example.com A 203.0.113.7",
		"www.example.com CNAME web.shop.fed.svc.example.com",
	}, got)

	// A Service of that name that no federation manages does not count, as for the DNS loop.
	unmanaged := managedService("203.0.113.7")
	unmanaged.SetLabels(nil)
	in.Live["us"] = []*unstructured.Unstructured{unmanaged}
	rep, err = preview.Run(in)
	require.NoError(t, err)
	require.Empty(t, rep.Objects[0].Problems)
	for _, ep := range rep.Objects[0].DNS[0].Endpoints {
		require.Equal(t, "CNAME", ep.RecordType, ep.DNSName)
	}
	in.Live["us"] = []*unstructured.Unstructured{managedService("203.0.113.7")}

	in.Domains = nil
	rep, err = preview.Run(in)
	require.NoError(t, err)
	require.Equal(t, []string{`Error: ServiceDNSRecord shop/web: spec.domainRef: no Domain "fed" in the input (DomainNotFound): nothing is published`},
		problems(rep.Objects[0].Problems))
}

// TestRunDNSNotReadyClusterFallsBack: a cluster that is not Ready keeps the entry the
// record's status had for it, without a load balancer, as the DNS loop keeps it: its names
// are still published, as CNAMEs to the level above, instead of vanishing.
func TestRunDNSNotReadyClusterFallsBack(t *testing.T) {
	in, err := preview.Decode([]byte(fleet + "\n---\n" + webService))
	require.NoError(t, err)
	in.ServiceDNSRecords[0].Status = dnsrecord.ServiceDNSRecordStatus{Domain: "example.com", DNS: []dnsrecord.ClusterDNS{
		{Cluster: "eu", Region: "europe-west1", LoadBalancer: lb("203.0.113.9")},
		{Cluster: "us", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("203.0.113.7")},
	}}
	require.NoError(t, err)
	in.Live = map[string][]*unstructured.Unstructured{"us": {managedService("203.0.113.7")}, "eu": {managedService("203.0.113.9")}, "ap": {}, "sa": {}}
	rep, err := preview.Run(in)
	require.NoError(t, err)
	o := rep.Objects[0]
	require.Empty(t, o.Problems)
	require.Contains(t, o.DNS[0].Names, "web.shop.fed.svc.europe-west1.example.com", "eu had an entry: its name stays")
	var got []string
	for _, ep := range o.DNS[0].Endpoints {
		got = append(got, ep.DNSName+" "+ep.RecordType+" "+ep.Targets[0])
	}
	require.Equal(t, []string{
		"web.shop.fed.svc.asia-east1.example.com CNAME web.shop.fed.svc.example.com",
		"web.shop.fed.svc.europe-west1.example.com CNAME web.shop.fed.svc.example.com",
		"web.shop.fed.svc.example.com A 203.0.113.7",
		"web.shop.fed.svc.southamerica-east1.example.com CNAME web.shop.fed.svc.example.com",
		"web.shop.fed.svc.us-east-1.example.com A 203.0.113.7",
		"web.shop.fed.svc.us-east-1a.us-east-1.example.com A 203.0.113.7",
		"www.example.com CNAME web.shop.fed.svc.example.com",
	}, got, "eu is not Ready: its region falls back to the world, as the DNS loop publishes it")
}

func lb(ip string) corev1.LoadBalancerStatus {
	return corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ip}}}
}

// managedService is the Service web that sync propagated, with a load balancer at ip.
func managedService(ip string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{federation.ManagedByLabel: "fedkit"}},
		"status":   map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": ip}}}},
	}}
}

// TestRunDNSMemberDoesNotDecode: a live member Service whose status.loadBalancer does not
// decode is a warning naming the cluster; its cluster keeps the load balancer the record's
// status has, as the DNS loop keeps it while it retries. A cluster missing from Live was not
// read and keeps its load balancer too.
func TestRunDNSMemberDoesNotDecode(t *testing.T) {
	in, err := preview.Decode([]byte(fleet + "\n---\n" + webService))
	require.NoError(t, err)
	in.ServiceDNSRecords[0].Status.DNS = []dnsrecord.ClusterDNS{
		{Cluster: "sa", Region: "southamerica-east1", LoadBalancer: lb("203.0.113.8")},
		{Cluster: "us", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("203.0.113.7")},
	}
	bad := managedService("203.0.113.1")
	bad.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": "203.0.113.1"}}
	in.Live = map[string][]*unstructured.Unstructured{"us": {bad}, "ap": {}}
	rep, err := preview.Run(in)
	require.NoError(t, err)
	o := rep.Objects[0]
	require.Len(t, o.Problems, 1)
	require.Equal(t, preview.Warning, o.Problems[0].Severity)
	require.Contains(t, o.Problems[0].String(), `ServiceDNSRecord shop/web: status.dns: cluster "us": Service shop/web: status.loadBalancer: `)
	require.Equal(t, []string{
		"web.shop.fed.svc.asia-east1.example.com CNAME web.shop.fed.svc.example.com",
		"web.shop.fed.svc.example.com A 203.0.113.7,203.0.113.8",
		"web.shop.fed.svc.southamerica-east1.example.com A 203.0.113.8",
		"web.shop.fed.svc.us-east-1.example.com A 203.0.113.7",
		"web.shop.fed.svc.us-east-1a.us-east-1.example.com A 203.0.113.7",
		"www.example.com CNAME web.shop.fed.svc.example.com",
	}, endpointLines(o.DNS[0].Endpoints))
}

var (
	services       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	endpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	namespaces     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// dnsLoop is a fake host and fleet with the real DNS loop: the FederatedService web in
// namespace shop, its ServiceDNSRecord under the Domain example.com, and in each member the
// Service sync propagated (unless the member is listed in unmanaged: a Service of the same
// name that no federation manages) with a ready endpoint behind it.
type dnsLoop struct {
	host  *fake.Cluster
	fleet *fake.Fleet
	loop  *dnsrecord.Controller
}

func newDNSLoop(t *testing.T, unmanaged ...string) *dnsLoop {
	t.Helper()
	clock := clocktesting.NewFakeClock(now)
	l := &loops{host: fake.NewHost("host"), fleet: fake.NewFleet()}
	l.host.SetClock(clock)
	crds, err := dnsrecord.CRDs()
	require.NoError(t, err)
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		require.NoError(t, err)
		_, err = l.host.Create(ctx, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, &unstructured.Unstructured{Object: m})
		require.NoError(t, err)
	}
	l.fleet.SetClock(clock)
	l.fleet.SetWorkloads(fake.Workloads{LoadBalancers: true})
	for _, m := range []struct{ name, region, zone string }{
		{"a", "us-east-1", "us-east-1a"}, {"b", "us-east-1", "us-east-1b"}, {"c", "europe-west1", "europe-west1-b"},
	} {
		l.fleet.Add(m.name, map[string]string{federation.RegionLabel: m.region, federation.ZoneLabel: m.zone})
	}
	require.NoError(t, l.fleet.Register(ctx, l.host))
	for _, ns := range []string{"shop", "fedkit-system"} {
		l.create(t, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	}
	l.create(t, dnsrecord.DomainGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: Domain,
	  metadata: {name: fed, namespace: fedkit-system}, domain: example.com}`)
	l.create(t, federation.ServiceType.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedService,
	  metadata: {name: web, namespace: shop}, spec: {template: {spec: {type: LoadBalancer, ports: [{port: 80}]}}, placement: {clusterSelector: {}}}}`)
	l.create(t, dnsrecord.ServiceDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: ServiceDNSRecord,
	  metadata: {name: web, namespace: shop}, spec: {domainRef: fed, dnsPrefix: www}}`)
	for _, name := range l.fleet.Names() {
		m, _ := l.fleet.Member(name)
		member := &loops{host: m} // to create in the member as on the host
		labels := fmt.Sprintf("{%q: fedkit}", federation.ManagedByLabel)
		if contains(unmanaged, name) {
			labels = "{app: web}"
		}
		member.create(t, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
		member.create(t, services, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: shop, labels: `+labels+`},
		  spec: {type: LoadBalancer, ports: [{port: 80}], selector: {app: web}}}`)
		member.create(t, endpointSlices, `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice,
		  metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}},
		  addressType: IPv4, endpoints: [{addresses: [10.1.0.1], conditions: {ready: true}}]}`)
	}
	l.fleet.Tick() // every Service gets its load balancer
	loop, err := dnsrecord.New(l.host, l.fleet, dnsrecord.Options{Clock: clock})
	require.NoError(t, err)
	return &dnsLoop{host: l.host, fleet: l.fleet, loop: loop}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// pass runs the DNS loop once and returns the records it published.
func (l *dnsLoop) pass(t *testing.T) []string {
	t.Helper()
	_, err := l.loop.Reconcile(ctx, federation.Key{Namespace: "shop", Name: "web"})
	require.NoError(t, err)
	u, err := l.host.Peek(dnsrecord.DNSEndpointGVR, "shop", "service-web")
	require.NoError(t, err)
	var de dnsrecord.DNSEndpoint
	require.NoError(t, federation.FromUnstructured(u, &de))
	return endpointLines(de.Spec.Endpoints)
}

// preview runs a preview of what the host and the members hold now, with the member
// Services as live objects, and returns the records it shows.
func (l *dnsLoop) preview(t *testing.T) []string {
	t.Helper()
	in := preview.Input{Now: now, Live: map[string][]*unstructured.Unstructured{}}
	for _, u := range l.host.Objects(federation.ServiceType.FederatedGVR()) {
		o, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		in.Objects = append(in.Objects, *o)
	}
	for _, u := range l.host.Objects(federation.ClusterGVR) {
		o, err := federation.ClusterFromUnstructured(u)
		require.NoError(t, err)
		in.Clusters = append(in.Clusters, *o)
	}
	for _, u := range l.host.Objects(dnsrecord.ServiceDNSRecordGVR) {
		var rec dnsrecord.ServiceDNSRecord
		require.NoError(t, federation.FromUnstructured(u, &rec))
		in.ServiceDNSRecords = append(in.ServiceDNSRecords, rec)
	}
	for _, u := range l.host.Objects(dnsrecord.DomainGVR) {
		var d dnsrecord.Domain
		require.NoError(t, federation.FromUnstructured(u, &d))
		in.Domains = append(in.Domains, d)
	}
	for _, name := range l.fleet.Names() {
		m, _ := l.fleet.Member(name)
		in.Live[name] = m.Objects(services)
	}
	rep, err := preview.Run(in)
	require.NoError(t, err)
	require.Len(t, rep.Objects, 1)
	require.Len(t, rep.Objects[0].DNS, 1)
	for _, p := range rep.Objects[0].Problems {
		require.NotEqual(t, preview.Error, p.Severity, p.String())
	}
	return endpointLines(rep.Objects[0].DNS[0].Endpoints)
}

func endpointLines(eps []dnsrecord.Endpoint) []string {
	out := []string{}
	for _, e := range eps {
		out = append(out, fmt.Sprintf("%s %s %s", e.DNSName, e.RecordType, strings.Join(e.Targets, ",")))
	}
	return out
}

// TestRunDNSAgreesWithTheLoop: the records a preview shows are the ones the DNS loop then
// publishes from the same host and members: with every cluster Ready, with a cluster that
// went not Ready since the last pass (its names fall back), and with a member Service that
// no federation manages (it does not count).
func TestRunDNSAgreesWithTheLoop(t *testing.T) {
	const (
		global = "web.shop.fed.svc.example.com"
		east   = "web.shop.fed.svc.us-east-1.example.com"
		eu     = "web.shop.fed.svc.europe-west1.example.com"
	)
	tests := []struct {
		name      string
		unmanaged []string
		before    func(t *testing.T, l *dnsLoop) // between the loop's first pass and the preview
		want      []string
	}{{
		name: "all Ready",
		want: []string{
			"web.shop.fed.svc.europe-west1-b.europe-west1.example.com A 198.18.3.1", eu + " A 198.18.3.1",
			global + " A 198.18.1.1,198.18.2.1,198.18.3.1", east + " A 198.18.1.1,198.18.2.1",
			"web.shop.fed.svc.us-east-1a.us-east-1.example.com A 198.18.1.1", "web.shop.fed.svc.us-east-1b.us-east-1.example.com A 198.18.2.1",
			"www.example.com CNAME " + global,
		},
	}, {
		name: "c not Ready",
		before: func(t *testing.T, l *dnsLoop) {
			require.NoError(t, l.fleet.Partition("c"))
			require.NoError(t, l.fleet.Register(ctx, l.host))
		},
		want: []string{
			"web.shop.fed.svc.europe-west1-b.europe-west1.example.com CNAME " + eu, eu + " CNAME " + global,
			global + " A 198.18.1.1,198.18.2.1", east + " A 198.18.1.1,198.18.2.1",
			"web.shop.fed.svc.us-east-1a.us-east-1.example.com A 198.18.1.1", "web.shop.fed.svc.us-east-1b.us-east-1.example.com A 198.18.2.1",
			"www.example.com CNAME " + global,
		},
	}, {
		name:      "b's Service not managed",
		unmanaged: []string{"b"},
		want: []string{
			"web.shop.fed.svc.europe-west1-b.europe-west1.example.com A 198.18.3.1", eu + " A 198.18.3.1",
			global + " A 198.18.1.1,198.18.3.1", east + " A 198.18.1.1",
			"web.shop.fed.svc.us-east-1a.us-east-1.example.com A 198.18.1.1", "web.shop.fed.svc.us-east-1b.us-east-1.example.com CNAME " + east,
			"www.example.com CNAME " + global,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newDNSLoop(t, tt.unmanaged...)
			l.pass(t)
			if tt.before != nil {
				tt.before(t, l)
			}
			previewed := l.preview(t)
			published := l.pass(t)
			if diff := cmp.Diff(published, previewed); diff != "" {
				t.Errorf("preview (-loop +preview):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, published); diff != "" {
				t.Errorf("the loop published (-want +got):\n%s", diff)
			}
		})
	}
}
