package dns_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	externaldns "sigs.k8s.io/external-dns/apis/v1alpha1"
	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/testenv"
)

// members is a ClusterSet of fixed clients.
type members map[string]federation.ClusterClient

func (m members) Client(name string) (federation.ClusterClient, error) {
	c, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("members: %q: %w", name, federation.ErrClusterNotFound)
	}
	return c, nil
}

// registerCluster writes the Cluster of a member to the host, Ready or not, as the cluster
// monitor would.
func registerCluster(ctx context.Context, t *testing.T, host federation.ClusterClient, name, region, zone string, ready bool) {
	t.Helper()
	status := metav1.ConditionTrue
	if !ready {
		status = metav1.ConditionFalse
	}
	cl := &federation.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       federation.ClusterSpec{APIEndpoint: "https://" + name + ".example.invalid", Region: region, Zones: []string{zone}},
	}
	u, err := federation.ToUnstructured(cl)
	require.NoError(t, err)
	stored, err := host.Get(ctx, federation.ClusterGVR, "", name)
	if apierrors.IsNotFound(err) {
		stored, err = host.Create(ctx, federation.ClusterGVR, u)
	}
	require.NoError(t, err)
	cl.Status.Conditions = []metav1.Condition{{
		Type: federation.ConditionReady, Status: status, Reason: "Test", Message: "set by the test",
		LastTransitionTime: metav1.NewTime(time.Now().Truncate(time.Second)),
	}}
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cl.Status)
	require.NoError(t, err)
	stored.Object["status"] = st
	_, err = host.UpdateStatus(ctx, federation.ClusterGVR, stored)
	require.NoError(t, err)
}

// TestRealAPIServers runs the DNS controller against real kube-apiservers: fedkit's CRDs as
// shipped are accepted (and the approval annotation is what makes externaldns.k8s.io
// acceptable), the status and DNSEndpoint it writes survive the schemas unpruned, external-dns's
// types decode the DNSEndpoint, and the records answer a real resolver before and after a
// cluster fails.
func TestRealAPIServers(t *testing.T) {
	env := testenv.Shared(t)
	ctx := t.Context()
	host := env.Client(t, hostName)
	set := members{eastName: env.Client(t, eastName), westName: env.Client(t, westName)}

	crds, err := federation.CRDs(federation.ServiceType)
	require.NoError(t, err)
	dns, err := dnsrecord.CRDs()
	require.NoError(t, err)
	require.NoError(t, conformance.InstallCRDs(ctx, host, append(crds, dns...)...))
	requireApprovalNeeded(ctx, t, host)

	// The environment is shared by every run of the test binary (go test -count): objects of
	// an earlier run are deleted when the test ends, the namespace and Domain are kept.
	for _, o := range hostObjects {
		u := decodeYAML(t, o.doc)
		_, err := host.Create(ctx, o.gvr, u)
		if apierrors.IsAlreadyExists(err) && u.GetNamespace() != "default" {
			continue
		}
		require.NoError(t, err, o.doc)
		if u.GetNamespace() == "default" {
			t.Cleanup(func() { _ = host.Delete(context.Background(), o.gvr, "default", u.GetName(), metav1.DeleteOptions{}) })
		}
	}
	registerCluster(ctx, t, host, eastName, "us-east-1", "us-east-1a", true)
	registerCluster(ctx, t, host, westName, "europe-west1", "europe-west1-b", true)
	for i, name := range []string{eastName, westName} {
		member := set[name]
		var svc *unstructured.Unstructured
		for _, o := range memberObjects {
			u, err := member.Create(ctx, o.gvr, decodeYAML(t, o.doc))
			require.NoError(t, err, o.doc)
			t.Cleanup(func() { _ = member.Delete(context.Background(), o.gvr, "default", u.GetName(), metav1.DeleteOptions{}) })
			if o.gvr == servicesGVR {
				svc = u
			}
		}
		// The cloud's load-balancer controller.
		svc.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": fmt.Sprintf("192.0.2.%d", i+1)}}}}
		_, err := member.UpdateStatus(ctx, servicesGVR, svc)
		require.NoError(t, err)
	}

	c, err := dnsrecord.New(host, set, dnsrecord.Options{})
	require.NoError(t, err)
	key := federation.Key{Namespace: "default", Name: "web"}
	zone := serveZone(t)
	publish := func() *unstructured.Unstructured {
		t.Helper()
		_, err := c.Reconcile(ctx, key)
		require.NoError(t, err)
		u, err := host.Get(ctx, dnsrecord.DNSEndpointGVR, "default", "service-web")
		require.NoError(t, err)
		zone.set(t, decodeDNSEndpoint(t, u).Spec.Endpoints)
		return u
	}

	first := publish()
	require.Equal(t, global+" -> 192.0.2.1,192.0.2.2", zone.lookup(t, global))
	require.Equal(t, usEast+" -> 192.0.2.1", zone.lookup(t, usEast))
	require.Equal(t, usEast1+" -> 192.0.2.1", zone.lookup(t, usEast1))
	require.Equal(t, europeB+" -> 192.0.2.2", zone.lookup(t, europeB))
	require.Equal(t, global+" -> 192.0.2.1,192.0.2.2", zone.lookup(t, prefix))
	refs := first.GetOwnerReferences()
	require.Len(t, refs, 1)
	require.Equal(t, "ServiceDNSRecord", refs[0].Kind)

	rec, err := host.Get(ctx, dnsrecord.ServiceDNSRecordGVR, "default", "web")
	require.NoError(t, err)
	var typed dnsrecord.ServiceDNSRecord
	require.NoError(t, federation.FromUnstructured(rec, &typed))
	require.Len(t, typed.Status.DNS, 2, "status.dns survives the schema")
	require.Equal(t, "192.0.2.1", typed.Status.DNS[0].LoadBalancer.Ingress[0].IP)
	require.Equal(t, "example.com", typed.Status.Domain)

	// A pass with nothing new writes nothing: what was written is what the schemas keep.
	again := publish()
	require.Equal(t, first.GetResourceVersion(), again.GetResourceVersion(), "DNSEndpoint rewritten")
	recAgain, err := host.Get(ctx, dnsrecord.ServiceDNSRecordGVR, "default", "web")
	require.NoError(t, err)
	require.Equal(t, rec.GetResourceVersion(), recAgain.GetResourceVersion(), "status rewritten")

	registerCluster(ctx, t, host, eastName, "us-east-1", "us-east-1a", false)
	publish()
	require.Equal(t, global+" -> 192.0.2.2", zone.lookup(t, usEast1), "east's zone falls back through its region to the world")
	require.Equal(t, europeB+" -> 192.0.2.2", zone.lookup(t, europeB))

	// No garbage collector runs here: the controller deletes the DNSEndpoint itself.
	require.NoError(t, host.Delete(ctx, dnsrecord.ServiceDNSRecordGVR, "default", "web", metav1.DeleteOptions{}))
	_, err = c.Reconcile(ctx, key)
	require.NoError(t, err)
	_, err = host.Get(ctx, dnsrecord.DNSEndpointGVR, "default", "service-web")
	require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
}

// requireApprovalNeeded shows why DNSEndpointCRD carries the approval annotation: the API
// server refuses a CRD in externaldns.k8s.io without one.
func requireApprovalNeeded(ctx context.Context, t *testing.T, host federation.ClusterClient) {
	t.Helper()
	crd, err := dnsrecord.DNSEndpointCRD()
	require.NoError(t, err)
	crd.Name = "probes." + dnsrecord.ExternalDNSGroup
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: "Probe", ListKind: "ProbeList", Plural: "probes", Singular: "probe"}
	delete(crd.Annotations, federation.ApprovalAnnotation)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	_, err = host.Create(ctx, conformance.CRDGVR, &unstructured.Unstructured{Object: m})
	require.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
	require.ErrorContains(t, err, federation.ApprovalAnnotation)
}

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
