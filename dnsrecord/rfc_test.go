package dnsrecord_test

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/dnsrecord"
)

// TestTTLLimit: a TTL is an unsigned 32-bit field whose top bit must be zero (RFC 2181 §8), so
// recordTTL above 2^31-1 is refused, naming the record and the field; 2^31-1 itself is valid.
func TestTTLLimit(t *testing.T) {
	ok := dnsrecord.ClusterDNS{Cluster: "east", Region: "us-east-1", LoadBalancer: lb("10.0.0.1")}
	tests := []struct {
		name string
		ttl  int64
		want string // "" = valid
	}{
		{"the largest TTL", math.MaxInt32, ""},
		{"one more", math.MaxInt32 + 1, "spec.recordTTL 2147483648 is above 2147483647 (RFC 2181)"},
		{"far above", math.MaxInt64, "spec.recordTTL 9223372036854775807 is above 2147483647 (RFC 2181)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := dnsrecord.ServiceEndpoints(context.Background(), serviceRecord(dnsrecord.ServiceDNSRecordSpec{RecordTTL: tt.ttl}, ok), nil)
			ing := ingressRecord([]string{"shop.example.com"}, dnsrecord.ClusterIngressDNS{Cluster: "east", LoadBalancer: lb("10.0.0.1")})
			ing.Spec.RecordTTL = tt.ttl
			ingEps, ingErr := dnsrecord.IngressEndpoints(context.Background(), ing, nil)
			if tt.want == "" {
				require.NoError(t, err)
				require.NoError(t, ingErr)
				require.Equal(t, tt.ttl, svc[0].RecordTTL)
				require.Equal(t, tt.ttl, ingEps[0].RecordTTL)
				return
			}
			require.ErrorIs(t, err, dnsrecord.ErrInvalidRecord)
			require.ErrorContains(t, err, "ServiceDNSRecord shop/web: "+tt.want)
			require.ErrorIs(t, ingErr, dnsrecord.ErrInvalidRecord)
			require.ErrorContains(t, ingErr, "IngressDNSRecord shop/web: "+tt.want)
		})
	}
}

// TestNamesAreCaseInsensitive: DNS names compare without regard to case (RFC 4343), so names
// that differ only in case are one name: they are lower-cased before records merge, and a
// CNAME points at the lower-cased name.
func TestNamesAreCaseInsensitive(t *testing.T) {
	svc := serviceRecord(dnsrecord.ServiceDNSRecordSpec{DNSPrefix: "WWW"},
		dnsrecord.ClusterDNS{Cluster: "east-a", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("10.0.0.1")},
		dnsrecord.ClusterDNS{Cluster: "east-b", Region: "US-East-1", Zones: []string{"US-EAST-1A"}, LoadBalancer: lb("10.0.0.2")},
		dnsrecord.ClusterDNS{Cluster: "eu", Region: "Europe-West1", Zones: []string{"europe-west1-b"}},
	)
	svc.Status.Domain = "Example.COM"
	got, err := dnsrecord.ServiceEndpoints(context.Background(), svc, nil)
	require.NoError(t, err)
	want := []dnsrecord.Endpoint{
		cname(euw1b, euWest), cname(euWest, global), a(global, "10.0.0.1", "10.0.0.2"),
		a(usEast, "10.0.0.1", "10.0.0.2"), a(use1a, "10.0.0.1", "10.0.0.2"), cname("www.example.com", global),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ServiceEndpoints (-want +got):\n%s", diff)
	}

	names, err := dnsrecord.ServiceNames(svc)
	require.NoError(t, err)
	require.Equal(t, []string{euw1b, euWest, global, usEast, use1a, "www.example.com"}, names)

	ing := ingressRecord([]string{"Shop.Example.com", "shop.example.COM.", "*.SHOP.example.com"},
		dnsrecord.ClusterIngressDNS{Cluster: "eu", LoadBalancer: lb("10.0.0.1")})
	got, err = dnsrecord.IngressEndpoints(context.Background(), ing, nil)
	require.NoError(t, err)
	if diff := cmp.Diff([]dnsrecord.Endpoint{a("*.shop.example.com", "10.0.0.1"), a("shop.example.com", "10.0.0.1")}, got); diff != "" {
		t.Errorf("IngressEndpoints (-want +got):\n%s", diff)
	}
}
