package dnsrecord_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/randfill"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

// TestDeepCopyAndScheme fills every API type at random and checks that DeepCopyObject returns
// an equal object, and that AddToScheme maps each kind to its type.
func TestDeepCopyAndScheme(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, dnsrecord.AddToScheme(s))
	f := randfill.NewWithSeed(1).NilChance(0.2).NumElements(1, 3)
	for _, tc := range []struct {
		gvk schema.GroupVersionKind
		obj runtime.Object
	}{
		{dnsrecord.ServiceDNSRecordGVK, &dnsrecord.ServiceDNSRecord{}},
		{federation.DNSGroupVersion.WithKind("ServiceDNSRecordList"), &dnsrecord.ServiceDNSRecordList{}},
		{dnsrecord.IngressDNSRecordGVK, &dnsrecord.IngressDNSRecord{}},
		{federation.DNSGroupVersion.WithKind("IngressDNSRecordList"), &dnsrecord.IngressDNSRecordList{}},
		{dnsrecord.DomainGVK, &dnsrecord.Domain{}},
		{federation.DNSGroupVersion.WithKind("DomainList"), &dnsrecord.DomainList{}},
		{dnsrecord.DNSEndpointGVK, &dnsrecord.DNSEndpoint{}},
		{dnsrecord.ExternalDNSGroupVersion.WithKind("DNSEndpointList"), &dnsrecord.DNSEndpointList{}},
	} {
		t.Run(tc.gvk.Kind, func(t *testing.T) {
			made, err := s.New(tc.gvk)
			require.NoError(t, err)
			require.IsType(t, tc.obj, made)

			for range 20 {
				obj := tc.obj.DeepCopyObject()
				f.Fill(obj)
				if diff := cmp.Diff(obj, obj.DeepCopyObject()); diff != "" {
					t.Fatalf("DeepCopyObject (-original +copy):\n%s", diff)
				}
			}
		})
	}
}

// TestDeepCopySharesNothing checks that a copy's nested slices and maps are its own: writing into
// them leaves the original as it was.
func TestDeepCopySharesNothing(t *testing.T) {
	rec := &dnsrecord.ServiceDNSRecord{Status: dnsrecord.ServiceDNSRecordStatus{DNS: []dnsrecord.ClusterDNS{{
		Cluster: "eu", Zones: []string{"a"}, LoadBalancer: lb("192.0.2.1"),
	}}}}
	cp := rec.DeepCopy()
	cp.Status.DNS[0].Zones[0] = "changed"
	cp.Status.DNS[0].LoadBalancer.Ingress[0].IP = "changed"
	require.Equal(t, "a", rec.Status.DNS[0].Zones[0])
	require.Equal(t, "192.0.2.1", rec.Status.DNS[0].LoadBalancer.Ingress[0].IP)

	de := &dnsrecord.DNSEndpoint{Spec: dnsrecord.DNSEndpointSpec{Endpoints: []dnsrecord.Endpoint{{
		DNSName: "a.example.com", Targets: []string{"192.0.2.1"}, Labels: map[string]string{"k": "v"},
	}}}}
	dc := de.DeepCopy()
	dc.Spec.Endpoints[0].Targets[0] = "changed"
	dc.Spec.Endpoints[0].Labels["k"] = "changed"
	require.Equal(t, "192.0.2.1", de.Spec.Endpoints[0].Targets[0])
	require.Equal(t, "v", de.Spec.Endpoints[0].Labels["k"])
}
