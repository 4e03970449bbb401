package dns_test

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	externaldns "sigs.k8s.io/external-dns/apis/v1alpha1"
	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
)

// decodeDNSEndpoint decodes a DNSEndpoint as stored into external-dns's own type, strictly:
// a field external-dns does not know fails the test.
func decodeDNSEndpoint(t *testing.T, u *unstructured.Unstructured) *externaldns.DNSEndpoint {
	t.Helper()
	data, err := u.MarshalJSON()
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	de := &externaldns.DNSEndpoint{}
	require.NoError(t, dec.Decode(de), "external-dns's DNSEndpoint type decodes what fedkit writes")
	require.Equal(t, externaldns.GroupVersion.WithKind("DNSEndpoint"), de.GroupVersionKind())
	for _, ep := range de.Spec.Endpoints {
		checkEndpoint(t, ep)
	}
	return de
}

// checkEndpoint applies what external-dns checks before it hands an endpoint from a
// DNSEndpoint to a provider (its CRD source drops an endpoint with a target ending in a dot;
// endpoint.NewEndpoint refuses labels over 63 characters; CheckEndpoint), and what a provider
// needs of an A, AAAA or CNAME record: IPv4 targets, IPv6 targets, one name.
func checkEndpoint(t *testing.T, ep *endpoint.Endpoint) {
	t.Helper()
	require.True(t, ep.CheckEndpoint(), "external-dns refuses %s", ep)
	require.NotNil(t, endpoint.NewEndpointWithTTL(ep.DNSName, ep.RecordType, ep.RecordTTL, ep.Targets...), "%s", ep)
	require.True(t, ep.RecordTTL.IsConfigured(), "%s: the record's TTL is set", ep)
	require.NotEmpty(t, ep.Targets, "%s", ep)
	for _, target := range ep.Targets {
		require.False(t, strings.HasSuffix(target, "."), "%s: external-dns drops a target ending in a dot", ep)
		addr, err := netip.ParseAddr(target)
		switch ep.RecordType {
		case endpoint.RecordTypeA:
			require.True(t, err == nil && addr.Is4(), "%s: target %q", ep, target)
		case endpoint.RecordTypeAAAA:
			require.True(t, err == nil && addr.Is6(), "%s: target %q", ep, target)
		case endpoint.RecordTypeCNAME:
			require.Error(t, err, "%s: a CNAME points at a name", ep)
			require.Len(t, ep.Targets, 1, "%s: a CNAME has one target", ep)
		default:
			t.Fatalf("%s: unexpected record type", ep)
		}
	}
}

// TestDNSEndpointCRDIsExternalDNS compares dnsrecord.DNSEndpointCRD with the CRD external-dns
// ships in its module: the same names, scope, versions, subresources, approval and schema
// (descriptions aside), so either can be installed for the other's objects.
func TestDNSEndpointCRDIsExternalDNS(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/external-dns").Output()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "dnsendpoints.externaldns.k8s.io.yaml"))
	require.NoError(t, err)
	theirs := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, theirs))
	ours, err := dnsrecord.DNSEndpointCRD()
	require.NoError(t, err)

	require.Equal(t, theirs.Name, ours.Name)
	require.Equal(t, theirs.Annotations["api-approved.kubernetes.io"], ours.Annotations["api-approved.kubernetes.io"])
	require.Equal(t, theirs.Spec.Group, ours.Spec.Group)
	require.Equal(t, theirs.Spec.Names, ours.Spec.Names)
	require.Equal(t, theirs.Spec.Scope, ours.Spec.Scope)
	require.Len(t, ours.Spec.Versions, len(theirs.Spec.Versions))
	for i := range theirs.Spec.Versions {
		tv, ov := theirs.Spec.Versions[i], ours.Spec.Versions[i]
		require.Equal(t, tv.Name, ov.Name)
		require.Equal(t, tv.Served, ov.Served)
		require.Equal(t, tv.Storage, ov.Storage)
		require.Equal(t, tv.Subresources, ov.Subresources)
		stripDescriptions(tv.Schema.OpenAPIV3Schema)
		stripDescriptions(ov.Schema.OpenAPIV3Schema)
		if diff := cmp.Diff(tv.Schema.OpenAPIV3Schema, ov.Schema.OpenAPIV3Schema); diff != "" {
			t.Errorf("schema of %s (-external-dns +fedkit):\n%s", tv.Name, diff)
		}
	}
}

func stripDescriptions(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.Description = ""
	for k, p := range s.Properties {
		stripDescriptions(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		stripDescriptions(s.Items.Schema)
	}
	if s.AdditionalProperties != nil {
		stripDescriptions(s.AdditionalProperties.Schema)
	}
}
