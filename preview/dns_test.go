package preview_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
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
