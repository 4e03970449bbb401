package dnsrecord_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/dnsrecord"
)

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
