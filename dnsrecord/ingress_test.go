package dnsrecord_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// federateIngress creates the FederatedIngress name and, in each member, the managed Ingress
// with the load balancer its ingress controller would report.
func (w *world) federateIngress(name string, members map[string]string) {
	w.t.Helper()
	w.apply(w.host, federation.IngressType.FederatedGVR(), fmt.Sprintf(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedIngress,
	  metadata: {name: %s, namespace: default}, spec: {template: {}, placement: {clusterSelector: {}}}}`, name))
	for m, target := range members {
		w.apply(w.member(m), ingressesGVR, fmt.Sprintf(`{apiVersion: networking.k8s.io/v1, kind: Ingress,
		  metadata: {name: %s, namespace: default, labels: {%q: fedkit}}, spec: {rules: [{host: shop.example.com}]}}`, name, federation.ManagedByLabel))
		field := "ip"
		if strings.Contains(target, "elb") {
			field = "hostname"
		}
		require.NoError(w.t, w.member(m).Drift(ingressesGVR, "default", name, func(u *unstructured.Unstructured) {
			u.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{field: target}}}}
		}))
	}
}

func TestControllerIngress(t *testing.T) {
	w := newWorld(t)
	w.resolver["ingress-eu.elb.example.net"] = []string{"203.0.113.9", "2001:db8::9"}
	w.federateIngress("web", map[string]string{"east-a": "198.51.100.1", "eu": "ingress-eu.elb.example.net"})
	w.apply(w.host, dnsrecord.IngressDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: IngressDNSRecord,
	  metadata: {name: web, namespace: default}, spec: {hosts: [shop.example.com, www.shop.example.com], recordTTL: 300}}`)
	reg := prometheus.NewRegistry()
	c := w.controller(dnsrecord.Options{Registerer: reg})

	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Equal(t, []string{
		"shop.example.com A 198.51.100.1,203.0.113.9", "shop.example.com AAAA 2001:db8::9",
		"www.shop.example.com A 198.51.100.1,203.0.113.9", "www.shop.example.com AAAA 2001:db8::9",
	}, w.endpoints("ingress-web"))

	require.NoError(t, w.fleet.Partition("eu"))
	w.register()
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Equal(t, []string{"shop.example.com A 198.51.100.1", "www.shop.example.com A 198.51.100.1"}, w.endpoints("ingress-web"))
	u, err := w.host.Peek(dnsrecord.IngressDNSRecordGVR, "default", "web")
	require.NoError(t, err)
	var rec dnsrecord.IngressDNSRecord
	require.NoError(t, federation.FromUnstructured(u, &rec))
	require.Equal(t, []dnsrecord.ClusterIngressDNS{
		{Cluster: "east-a", LoadBalancer: lb("198.51.100.1")}, {Cluster: "east-b"}, {Cluster: "eu"},
	}, rec.Status.DNS)
	require.Equal(t, "True EndpointsWritten: 2 endpoint(s) from 3 cluster(s), 1 with a load balancer", ready(rec.Status.Conditions))

	require.NoError(t, w.fleet.Partition("east-a"))
	w.register()
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Empty(t, w.endpoints("ingress-web"), "no cluster can answer: no records")

	require.NoError(t, w.host.Delete(w.ctx, federation.IngressType.FederatedGVR(), "default", "web", metav1.DeleteOptions{}))
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.NoError(t, federation.FromUnstructured(must(w.host.Peek(dnsrecord.IngressDNSRecordGVR, "default", "web")), &rec))
	require.Equal(t, "False IngressNotFederated: no FederatedIngress default/web on the host: the Ingress is not federated, so nothing is published", ready(rec.Status.Conditions))
	require.Equal(t, 1.0, metricValues(t, reg)[`fedkit_dns_endpoint_writes_total{type="IngressDNSRecord",verb="create"}`])
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestMetrics(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "eu")
	w.serviceRecord("web", "{domainRef: fed}")
	reg := prometheus.NewRegistry()
	c := w.controller(dnsrecord.Options{Registerer: reg})
	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	w.controller(dnsrecord.Options{Registerer: reg}) // a second controller shares the collectors

	got := metricValues(t, reg)
	want := map[string]float64{
		`fedkit_dns_endpoint_writes_total{type="ServiceDNSRecord",verb="create"}`:                         1,
		`fedkit_reconciles_total{loop="dns",outcome="written",type="ServiceDNSRecord"}`:                   1,
		`fedkit_reconciles_total{loop="dns",outcome="unchanged",type="ServiceDNSRecord"}`:                 1,
		`fedkit_reconcile_duration_seconds{loop="dns",outcome="written",type="ServiceDNSRecord"}_count`:   1,
		`fedkit_reconcile_duration_seconds{loop="dns",outcome="unchanged",type="ServiceDNSRecord"}_count`: 1,
	}
	// No IngressDNSRecord web: the key's passes over that kind are no passes over a record.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	require.Len(t, got, 5, "%v", got)
}

// metricValues gathers reg as "name{label="value",...}" -> value (histograms: their count).
func metricValues(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			name := f.GetName()
			if len(labels) > 0 {
				name += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[name] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestClusterTopologyAgreesWithPlacement: the region and zones a record publishes are the
// ones placement spreads over (the rule is written twice because dnsrecord may not import
// placement).
func TestClusterTopologyAgreesWithPlacement(t *testing.T) {
	clusters := []federation.Cluster{
		{ObjectMeta: metav1.ObjectMeta{Name: "spec"}, Spec: federation.ClusterSpec{Region: "r1", Zones: []string{"z1", "z2"}},
			Status: federation.ClusterStatus{Region: "r2", Zones: []string{"z3"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "status", Labels: map[string]string{federation.RegionLabel: "r4"}},
			Status: federation.ClusterStatus{Region: "r2", Zones: []string{"z3"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "labels", Labels: map[string]string{federation.RegionLabel: "r4", federation.ZoneLabel: "z4"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "none"}},
	}
	w := newWorld(t)
	for _, name := range w.fleet.Names() {
		w.fleet.Remove(name)
		require.NoError(t, w.host.Delete(w.ctx, federation.ClusterGVR, "", name, metav1.DeleteOptions{}))
	}
	for _, cl := range clusters {
		cl.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Test", LastTransitionTime: metav1.Now()}}
		cl.Spec.APIEndpoint = "https://" + cl.Name + ".example.invalid"
		w.fleet.Add(cl.Name, nil)
		u, err := federation.ToUnstructured(&cl)
		require.NoError(t, err)
		require.NoError(t, w.host.Seed(u))
	}
	w.federateService("web")
	w.serviceRecord("web", "{domainRef: fed}")
	_, err := w.controller(dnsrecord.Options{}).Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	got := w.serviceStatus("web").DNS
	require.Len(t, got, len(clusters))
	for _, e := range got {
		i := slices.IndexFunc(clusters, func(c federation.Cluster) bool { return c.Name == e.Cluster })
		require.GreaterOrEqual(t, i, 0, e.Cluster)
		require.Equal(t, placement.Domain(&clusters[i], placement.KeyRegion), e.Region, "region of %s", e.Cluster)
		zones := slices.Sorted(slices.Values(e.Zones))
		require.Equal(t, placement.Domain(&clusters[i], placement.KeyZone), strings.Join(zones, ","), "zones of %s", e.Cluster)
	}
	require.Equal(t, "r1", got[2].Region, "spec first")
	require.Equal(t, "r2", got[3].Region, "then status")
	require.Equal(t, "r4", got[0].Region, "then the label")
}
