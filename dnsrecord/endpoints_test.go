package dnsrecord_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/dnsrecord"
)

// hosts is a Resolver answering from a map; a host it does not know fails as NXDOMAIN would.
type hosts map[string][]string

func (h hosts) LookupHost(_ context.Context, host string) ([]string, error) {
	ips, ok := h[host]
	if !ok {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	return ips, nil
}

// lb is a load balancer with the targets: IPs (anything with a colon counts as one, so that
// malformed IPv6 addresses can be written) and hostnames.
func lb(targets ...string) corev1.LoadBalancerStatus {
	var s corev1.LoadBalancerStatus
	for _, t := range targets {
		if _, err := netip.ParseAddr(t); err == nil || strings.Contains(t, ":") {
			s.Ingress = append(s.Ingress, corev1.LoadBalancerIngress{IP: t})
		} else {
			s.Ingress = append(s.Ingress, corev1.LoadBalancerIngress{Hostname: t})
		}
	}
	return s
}

func serviceRecord(spec dnsrecord.ServiceDNSRecordSpec, dns ...dnsrecord.ClusterDNS) *dnsrecord.ServiceDNSRecord {
	if spec.DomainRef == "" {
		spec.DomainRef = "fed"
	}
	return &dnsrecord.ServiceDNSRecord{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       spec,
		Status:     dnsrecord.ServiceDNSRecordStatus{Domain: "example.com", DNS: dns},
	}
}

// Names of the record web.shop with domainRef fed in example.com.
const (
	global = "web.shop.fed.svc.example.com"
	usEast = "web.shop.fed.svc.us-east-1.example.com"
	use1a  = "web.shop.fed.svc.us-east-1a.us-east-1.example.com"
	use1b  = "web.shop.fed.svc.us-east-1b.us-east-1.example.com"
	euWest = "web.shop.fed.svc.europe-west1.example.com"
	euw1b  = "web.shop.fed.svc.europe-west1-b.europe-west1.example.com"
)

func a(name string, targets ...string) dnsrecord.Endpoint {
	return dnsrecord.Endpoint{DNSName: name, RecordType: "A", Targets: targets, RecordTTL: 180}
}

func aaaa(name string, targets ...string) dnsrecord.Endpoint {
	return dnsrecord.Endpoint{DNSName: name, RecordType: "AAAA", Targets: targets, RecordTTL: 180}
}

func cname(name, target string) dnsrecord.Endpoint {
	return dnsrecord.Endpoint{DNSName: name, RecordType: "CNAME", Targets: []string{target}, RecordTTL: 180}
}

func TestServiceEndpoints(t *testing.T) {
	east1a := func(l corev1.LoadBalancerStatus) dnsrecord.ClusterDNS {
		return dnsrecord.ClusterDNS{Cluster: "east-a", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: l}
	}
	east1b := func(l corev1.LoadBalancerStatus) dnsrecord.ClusterDNS {
		return dnsrecord.ClusterDNS{Cluster: "east-b", Region: "us-east-1", Zones: []string{"us-east-1b"}, LoadBalancer: l}
	}
	west := func(l corev1.LoadBalancerStatus) dnsrecord.ClusterDNS {
		return dnsrecord.ClusterDNS{Cluster: "eu", Region: "europe-west1", Zones: []string{"europe-west1-b"}, LoadBalancer: l}
	}
	tests := []struct {
		name string
		rec  *dnsrecord.ServiceDNSRecord
		want []dnsrecord.Endpoint
	}{
		{
			name: "one cluster: zone, region and global names are A records",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, east1a(lb("10.0.0.1"))),
			want: []dnsrecord.Endpoint{a(global, "10.0.0.1"), a(usEast, "10.0.0.1"), a(use1a, "10.0.0.1")},
		},
		{
			name: "no domain yet: no records",
			rec: func() *dnsrecord.ServiceDNSRecord {
				r := serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, east1a(lb("10.0.0.1")))
				r.Status.Domain = ""
				return r
			}(),
		},
		{
			name: "a zone without a load balancer is a CNAME to its region",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, east1a(lb("10.0.0.1")), east1b(lb())),
			want: []dnsrecord.Endpoint{a(global, "10.0.0.1"), a(usEast, "10.0.0.1"), a(use1a, "10.0.0.1"), cname(use1b, usEast)},
		},
		{
			name: "a region without a load balancer is a CNAME to the global name",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, east1a(lb("10.0.0.1")), west(lb())),
			want: []dnsrecord.Endpoint{
				cname(euw1b, euWest), cname(euWest, global), a(global, "10.0.0.1"), a(usEast, "10.0.0.1"), a(use1a, "10.0.0.1"),
			},
		},
		{
			name: "no load balancer anywhere: the global name is dropped, the CNAMEs stay",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, east1a(lb()), west(lb())),
			want: []dnsrecord.Endpoint{cname(euw1b, euWest), cname(euWest, global), cname(usEast, global), cname(use1a, usEast)},
		},
		{
			name: "no clusters: no records",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}),
		},
		{
			name: "region and global names unite the clusters' targets, sorted numerically and unique",
			rec: serviceRecord(dnsrecord.ServiceDNSRecordSpec{},
				east1a(lb("10.0.0.10", "10.0.0.9")), east1b(lb("10.0.0.9", "10.0.0.2")), west(lb("192.0.2.1"))),
			want: []dnsrecord.Endpoint{
				a(euw1b, "192.0.2.1"), a(euWest, "192.0.2.1"),
				a(global, "10.0.0.2", "10.0.0.9", "10.0.0.10", "192.0.2.1"),
				a(usEast, "10.0.0.2", "10.0.0.9", "10.0.0.10"),
				a(use1a, "10.0.0.9", "10.0.0.10"), a(use1b, "10.0.0.2", "10.0.0.9"),
			},
		},
		{
			name: "two clusters in one zone: the A record wins over the CNAME",
			rec: serviceRecord(dnsrecord.ServiceDNSRecordSpec{},
				east1a(lb()), dnsrecord.ClusterDNS{Cluster: "east-a2", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("10.0.0.3")}),
			want: []dnsrecord.Endpoint{a(global, "10.0.0.3"), a(usEast, "10.0.0.3"), a(use1a, "10.0.0.3")},
		},
		{
			name: "a cluster in several zones gets a name in each",
			rec: serviceRecord(dnsrecord.ServiceDNSRecordSpec{},
				dnsrecord.ClusterDNS{Cluster: "east", Region: "us-east-1", Zones: []string{"us-east-1b", "", "us-east-1a"}, LoadBalancer: lb("10.0.0.1")}),
			want: []dnsrecord.Endpoint{a(global, "10.0.0.1"), a(usEast, "10.0.0.1"), a(use1a, "10.0.0.1"), a(use1b, "10.0.0.1")},
		},
		{
			name: "a cluster without a region contributes to the global name only",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "lab", Zones: []string{"rack-1"}, LoadBalancer: lb("10.0.0.7")}),
			want: []dnsrecord.Endpoint{a(global, "10.0.0.7")},
		},
		{
			name: "IPv6 addresses make AAAA records beside the A records",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, east1a(lb("2001:db8::10", "10.0.0.1", "2001:db8::9")), east1b(lb("::ffff:10.0.0.2"))),
			want: []dnsrecord.Endpoint{
				a(global, "10.0.0.1", "10.0.0.2"), aaaa(global, "2001:db8::9", "2001:db8::10"),
				a(usEast, "10.0.0.1", "10.0.0.2"), aaaa(usEast, "2001:db8::9", "2001:db8::10"),
				a(use1a, "10.0.0.1"), aaaa(use1a, "2001:db8::9", "2001:db8::10"),
				a(use1b, "10.0.0.2"),
			},
		},
		{
			name: "hostnames are resolved through the Resolver",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, east1a(lb("lb-1.elb.example.net", "10.0.0.1"))),
			want: []dnsrecord.Endpoint{a(global, "10.0.0.1", "10.0.0.5"), aaaa(global, "2001:db8::5"), a(usEast, "10.0.0.1", "10.0.0.5"),
				aaaa(usEast, "2001:db8::5"), a(use1a, "10.0.0.1", "10.0.0.5"), aaaa(use1a, "2001:db8::5")},
		},
		{
			name: "recordTTL sets every TTL",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{RecordTTL: 30}, east1a(lb()), west(lb("192.0.2.1"))),
			want: withTTL(30, a(euw1b, "192.0.2.1"), a(euWest, "192.0.2.1"), a(global, "192.0.2.1"), cname(usEast, global), cname(use1a, usEast)),
		},
		{
			name: "externalName replaces the name and labels every endpoint",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{ExternalName: "shop-front", DNSPrefix: "www"}, east1a(lb("10.0.0.1"))),
			want: withLabels(map[string]string{"serviceName": "web"},
				a("shop-front.shop.fed.svc.example.com", "10.0.0.1"),
				a("shop-front.shop.fed.svc.us-east-1.example.com", "10.0.0.1"),
				a("shop-front.shop.fed.svc.us-east-1a.us-east-1.example.com", "10.0.0.1"),
				cname("www.example.com", "shop-front.shop.fed.svc.example.com")),
		},
		{
			name: "dnsPrefix is a CNAME to the global name",
			rec:  serviceRecord(dnsrecord.ServiceDNSRecordSpec{DNSPrefix: "shop"}, east1a(lb("10.0.0.1"))),
			want: []dnsrecord.Endpoint{cname("shop.example.com", global), a(global, "10.0.0.1"), a(usEast, "10.0.0.1"), a(use1a, "10.0.0.1")},
		},
		{
			name: "a trailing dot on the domain is ignored",
			rec: func() *dnsrecord.ServiceDNSRecord {
				r := serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "lab", LoadBalancer: lb("10.0.0.7")})
				r.Status.Domain = "example.com."
				return r
			}(),
			want: []dnsrecord.Endpoint{a(global, "10.0.0.7")},
		},
	}
	resolver := hosts{"lb-1.elb.example.net": {"10.0.0.5", "2001:db8::5"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dnsrecord.ServiceEndpoints(context.Background(), tt.rec, resolver)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ServiceEndpoints (-want +got):\n%s", diff)
			}
		})
	}
}

func withTTL(ttl int64, eps ...dnsrecord.Endpoint) []dnsrecord.Endpoint {
	for i := range eps {
		eps[i].RecordTTL = ttl
	}
	return eps
}

func withLabels(labels map[string]string, eps ...dnsrecord.Endpoint) []dnsrecord.Endpoint {
	for i := range eps {
		eps[i].Labels = labels
	}
	return eps
}

func TestServiceEndpointsErrors(t *testing.T) {
	ok := dnsrecord.ClusterDNS{Cluster: "east", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("10.0.0.1")}
	tests := []struct {
		name     string
		rec      *dnsrecord.ServiceDNSRecord
		resolver dnsrecord.Resolver
		want     error
		msg      string
	}{
		{"nil record", nil, nil, dnsrecord.ErrInvalidRecord, "nil ServiceDNSRecord"},
		{"resolver error names the host and the cluster",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, ok, dnsrecord.ClusterDNS{Cluster: "aws", LoadBalancer: lb("gone.elb.example.net")}),
			hosts{}, dnsrecord.ErrResolve, `ServiceDNSRecord shop/web: cluster "aws": hostname "gone.elb.example.net": lookup gone.elb.example.net: no such host`},
		{"a hostname without a Resolver",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "aws", LoadBalancer: lb("lb.example.net")}),
			nil, dnsrecord.ErrResolve, `cluster "aws": hostname "lb.example.net": no Resolver`},
		{"a resolver answer that is not an IP",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "aws", LoadBalancer: lb("lb.example.net")}),
			hosts{"lb.example.net": {"lb2.example.net"}}, dnsrecord.ErrResolve, `hostname "lb.example.net" resolved to "lb2.example.net" is not an IP address`},
		{"an IP that does not parse",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, ok, dnsrecord.ClusterDNS{Cluster: "eu", LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "10.0.0.300"}}}}),
			nil, dnsrecord.ErrInvalidRecord, `status.dns[1].loadBalancer.ingress[0].ip (cluster "eu"): "10.0.0.300" is not an IP address`},
		{"an IP with a zone",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "eu", LoadBalancer: lb("fe80::1%eth0")}),
			nil, dnsrecord.ErrInvalidRecord, `"fe80::1%eth0" has a zone`},
		{"a region that is not a DNS label",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "eu", Region: "europe west", LoadBalancer: lb("10.0.0.1")}),
			nil, dnsrecord.ErrInvalidRecord, `status.dns[0].region (cluster "eu") "europe west": label "europe west" has the character ' '`},
		{"a zone with a dot",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "eu", Region: "eu", Zones: []string{"a", "b.c"}}),
			nil, dnsrecord.ErrInvalidRecord, `status.dns[0].zones[1] (cluster "eu") "b.c"`},
		{"a label longer than 63 characters",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{ExternalName: strings.Repeat("x", 64)}, ok),
			nil, dnsrecord.ErrInvalidRecord, "spec.externalName"},
		{"a dnsPrefix with an empty label",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{DNSPrefix: "www..shop"}, ok),
			nil, dnsrecord.ErrInvalidRecord, `spec.dnsPrefix "www..shop": has an empty label`},
		{"a domainRef starting with a hyphen",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{DomainRef: "-fed"}, ok),
			nil, dnsrecord.ErrInvalidRecord, `spec.domainRef "-fed"`},
		{"an empty namespace",
			func() *dnsrecord.ServiceDNSRecord {
				r := serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, ok)
				r.Namespace = ""
				return r
			}(),
			nil, dnsrecord.ErrInvalidRecord, "metadata.namespace is empty"},
		{"a negative TTL",
			serviceRecord(dnsrecord.ServiceDNSRecordSpec{RecordTTL: -1}, ok),
			nil, dnsrecord.ErrInvalidRecord, "spec.recordTTL -1 is negative"},
		{"a name longer than 253 characters",
			func() *dnsrecord.ServiceDNSRecord {
				r := serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, ok)
				r.Status.Domain = strings.Repeat(strings.Repeat("d", 60)+".", 4) + "com"
				return r
			}(),
			nil, dnsrecord.ErrInvalidRecord, "is longer than 253 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dnsrecord.ServiceEndpoints(context.Background(), tt.rec, tt.resolver)
			require.ErrorIs(t, err, tt.want)
			require.ErrorContains(t, err, tt.msg)
			require.Nil(t, got)
		})
	}
}

func TestServiceEndpointsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := serviceRecord(dnsrecord.ServiceDNSRecordSpec{}, dnsrecord.ClusterDNS{Cluster: "aws", LoadBalancer: lb("lb.example.net")})
	_, err := dnsrecord.ServiceEndpoints(ctx, rec, ctxResolver{})
	require.ErrorIs(t, err, context.Canceled, "the Resolver's error is wrapped")
	require.ErrorIs(t, err, dnsrecord.ErrResolve)
}

type ctxResolver struct{}

func (ctxResolver) LookupHost(ctx context.Context, _ string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("not reached")
}

func ingressRecord(hostNames []string, dns ...dnsrecord.ClusterIngressDNS) *dnsrecord.IngressDNSRecord {
	return &dnsrecord.IngressDNSRecord{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       dnsrecord.IngressDNSRecordSpec{Hosts: hostNames},
		Status:     dnsrecord.IngressDNSRecordStatus{DNS: dns},
	}
}

func TestIngressEndpoints(t *testing.T) {
	eu := func(l corev1.LoadBalancerStatus) dnsrecord.ClusterIngressDNS {
		return dnsrecord.ClusterIngressDNS{Cluster: "eu", LoadBalancer: l}
	}
	us := func(l corev1.LoadBalancerStatus) dnsrecord.ClusterIngressDNS {
		return dnsrecord.ClusterIngressDNS{Cluster: "us", LoadBalancer: l}
	}
	tests := []struct {
		name string
		rec  *dnsrecord.IngressDNSRecord
		want []dnsrecord.Endpoint
	}{
		{
			name: "each host is an A record of every cluster's targets",
			rec:  ingressRecord([]string{"shop.example.com", "api.example.com"}, eu(lb("10.0.0.2")), us(lb("10.0.0.1", "ingress.elb.example.net"))),
			want: []dnsrecord.Endpoint{a("api.example.com", "10.0.0.1", "10.0.0.2", "10.0.0.5"), a("shop.example.com", "10.0.0.1", "10.0.0.2", "10.0.0.5")},
		},
		{
			name: "no targets: no record (nothing to fall back to)",
			rec:  ingressRecord([]string{"shop.example.com"}, eu(lb()), us(lb())),
		},
		{
			name: "IPv6 targets make an AAAA record",
			rec:  ingressRecord([]string{"shop.example.com"}, eu(lb("2001:db8::1")), us(lb("10.0.0.1"))),
			want: []dnsrecord.Endpoint{a("shop.example.com", "10.0.0.1"), aaaa("shop.example.com", "2001:db8::1")},
		},
		{
			name: "duplicate hosts and trailing dots merge; wildcards are allowed",
			rec:  ingressRecord([]string{"shop.example.com.", "shop.example.com", "*.shop.example.com"}, eu(lb("10.0.0.1"))),
			want: []dnsrecord.Endpoint{a("*.shop.example.com", "10.0.0.1"), a("shop.example.com", "10.0.0.1")},
		},
		{
			name: "no hosts: no records",
			rec:  ingressRecord(nil, eu(lb("10.0.0.1"))),
		},
	}
	resolver := hosts{"ingress.elb.example.net": {"10.0.0.5"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dnsrecord.IngressEndpoints(context.Background(), tt.rec, resolver)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("IngressEndpoints (-want +got):\n%s", diff)
			}
		})
	}

	rec := ingressRecord([]string{"shop.example.com"}, dnsrecord.ClusterIngressDNS{Cluster: "us", LoadBalancer: lb("gone.example.net")})
	_, err := dnsrecord.IngressEndpoints(context.Background(), rec, hosts{})
	require.ErrorIs(t, err, dnsrecord.ErrResolve)
	require.ErrorContains(t, err, `IngressDNSRecord shop/web: cluster "us": hostname "gone.example.net"`)

	for _, bad := range []string{"", "shop..example.com", "shop.*.example.com", "shop example.com"} {
		_, err = dnsrecord.IngressEndpoints(context.Background(), ingressRecord([]string{"ok.example.com", bad}), nil)
		require.ErrorIs(t, err, dnsrecord.ErrInvalidRecord, "host %q", bad)
		require.ErrorContains(t, err, "spec.hosts[1]", "host %q", bad)
	}
	rec.Spec.RecordTTL = 5
	rec.Status.DNS = []dnsrecord.ClusterIngressDNS{eu(lb("10.0.0.1"))}
	got, err := dnsrecord.IngressEndpoints(context.Background(), rec, nil)
	require.NoError(t, err)
	require.Equal(t, int64(5), got[0].RecordTTL)
}

// TestServiceNames: every name ServiceEndpoints publishes once the clusters have load
// balancers, whatever they have now (none, or a hostname no resolver is given for).
func TestServiceNames(t *testing.T) {
	rec := serviceRecord(dnsrecord.ServiceDNSRecordSpec{DNSPrefix: "www"},
		dnsrecord.ClusterDNS{Cluster: "a", Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}},
		dnsrecord.ClusterDNS{Cluster: "b", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("lb.example.net")})
	got, err := dnsrecord.ServiceNames(rec)
	require.NoError(t, err)
	want := []string{global, usEast, use1a, use1b, "www.example.com"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ServiceNames (-want +got):\n%s", diff)
	}
	require.Len(t, rec.Status.DNS[1].LoadBalancer.Ingress, 1, "rec is not modified")

	// The same names as the records, once every cluster has an address.
	rec.Status.DNS[0].LoadBalancer, rec.Status.DNS[1].LoadBalancer = lb("10.0.0.1"), lb("10.0.0.2")
	eps, err := dnsrecord.ServiceEndpoints(context.Background(), rec, nil)
	require.NoError(t, err)
	var names []string
	for _, ep := range eps {
		names = append(names, ep.DNSName)
	}
	require.ElementsMatch(t, want, names)

	rec.Status.DNS[0].Region = "bad region"
	_, err = dnsrecord.ServiceNames(rec)
	require.ErrorIs(t, err, dnsrecord.ErrInvalidRecord)
	rec.Status.Domain = ""
	names, err = dnsrecord.ServiceNames(rec)
	require.NoError(t, err)
	require.Empty(t, names, "no domain yet")
}
