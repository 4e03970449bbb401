package dnsrecord_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

var (
	epoch             = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	crdGVR            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaceGVR      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ingressesGVR      = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// world is a host and a fleet of three members, as a control plane with sync running would
// have them: Clusters registered on the host, a Domain, and fedkit's CRDs (fake.NewHost) with
// the DNS CRDs.
//
//	east-a  us-east-1     us-east-1a      load balancers 198.18.1.x
//	east-b  us-east-1     us-east-1b      load balancers 198.18.2.x
//	eu      europe-west1  europe-west1-b  load balancers 198.18.3.x
type world struct {
	t        *testing.T
	ctx      context.Context
	clock    *clocktesting.FakeClock
	host     *fake.Cluster
	fleet    *fake.Fleet
	resolver hosts
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, ctx: context.Background(), clock: clocktesting.NewFakeClock(epoch), host: fake.NewHost("host"), fleet: fake.NewFleet(), resolver: hosts{}}
	w.host.SetClock(w.clock)
	dns, err := dnsrecord.CRDs()
	require.NoError(t, err)
	for _, crd := range dns {
		w.create(w.host, crdGVR, toUnstructured(t, crd))
	}
	w.apply(w.host, namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`)
	w.apply(w.host, dnsrecord.DomainGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: Domain,
	  metadata: {name: fed, namespace: fedkit-system}, domain: example.com, nameServer: ns1.example.com}`)

	w.fleet.SetClock(w.clock)
	w.fleet.SetWorkloads(fake.Workloads{LoadBalancers: true})
	for _, m := range []struct{ name, region, zone string }{
		{"east-a", "us-east-1", "us-east-1a"}, {"east-b", "us-east-1", "us-east-1b"}, {"eu", "europe-west1", "europe-west1-b"},
	} {
		w.fleet.Add(m.name, map[string]string{federation.RegionLabel: m.region, federation.ZoneLabel: m.zone})
	}
	w.register()
	return w
}

func toUnstructured(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: m}
}

// register writes the members' Cluster objects (Ready or not) to the host, as the cluster
// monitor would.
func (w *world) register() {
	w.t.Helper()
	require.NoError(w.t, w.fleet.Register(w.ctx, w.host))
}

func (w *world) member(name string) *fake.Cluster {
	c, ok := w.fleet.Member(name)
	require.True(w.t, ok, name)
	return c
}

func (w *world) create(c *fake.Cluster, gvr schema.GroupVersionResource, u *unstructured.Unstructured) *unstructured.Unstructured {
	w.t.Helper()
	out, err := c.Create(w.ctx, gvr, u)
	require.NoError(w.t, err)
	return out
}

// apply creates the object written in YAML.
func (w *world) apply(c *fake.Cluster, gvr schema.GroupVersionResource, doc string) *unstructured.Unstructured {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(w.t, yaml.Unmarshal([]byte(doc), &u.Object))
	return w.create(c, gvr, u)
}

// federateService creates the FederatedService name on the host and, in each member, the
// Service sync would have propagated (type LoadBalancer, labelled as managed) with a ready
// endpoint behind it.
func (w *world) federateService(name string, members ...string) {
	w.t.Helper()
	w.apply(w.host, federation.ServiceType.FederatedGVR(), fmt.Sprintf(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedService,
	  metadata: {name: %s, namespace: default}, spec: {template: {spec: {type: LoadBalancer}}, placement: {clusterSelector: {}}}}`, name))
	for _, m := range members {
		w.apply(w.member(m), servicesGVR, fmt.Sprintf(`{apiVersion: v1, kind: Service,
		  metadata: {name: %s, namespace: default, labels: {%q: fedkit}},
		  spec: {type: LoadBalancer, ports: [{port: 80}], selector: {app: %s}}}`, name, federation.ManagedByLabel, name))
		w.apply(w.member(m), endpointSlicesGVR, fmt.Sprintf(`{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice,
		  metadata: {name: %s-1, namespace: default, labels: {kubernetes.io/service-name: %s}},
		  addressType: IPv4, endpoints: [{addresses: [10.1.0.1], conditions: {ready: true}}]}`, name, name))
	}
}

// setReady makes the endpoint behind the Service name in member m ready or not.
func (w *world) setReady(m, name string, ready bool) {
	w.t.Helper()
	require.NoError(w.t, w.member(m).Drift(endpointSlicesGVR, "default", name+"-1", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"addresses": []any{"10.1.0.1"}, "conditions": map[string]any{"ready": ready}}}, "endpoints")
	}))
}

func (w *world) serviceRecord(name, spec string) {
	w.t.Helper()
	w.apply(w.host, dnsrecord.ServiceDNSRecordGVR, fmt.Sprintf(`{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: ServiceDNSRecord,
	  metadata: {name: %s, namespace: default}, spec: %s}`, name, spec))
}

func (w *world) controller(opts dnsrecord.Options) *dnsrecord.Controller {
	w.t.Helper()
	if opts.Clock == nil {
		opts.Clock = w.clock
	}
	if opts.Resolver == nil {
		opts.Resolver = w.resolver
	}
	c, err := dnsrecord.New(w.host, w.fleet, opts)
	require.NoError(w.t, err)
	return c
}

// endpoints returns the DNSEndpoint's records as "name TYPE target,target" lines.
func (w *world) endpoints(name string) []string {
	w.t.Helper()
	u, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "default", name)
	require.NoError(w.t, err)
	var de dnsrecord.DNSEndpoint
	require.NoError(w.t, federation.FromUnstructured(u, &de))
	return lines(de.Spec.Endpoints)
}

func lines(eps []dnsrecord.Endpoint) []string {
	out := []string{}
	for _, e := range eps {
		out = append(out, fmt.Sprintf("%s %s %s", e.DNSName, e.RecordType, strings.Join(e.Targets, ",")))
	}
	return out
}

func (w *world) serviceStatus(name string) dnsrecord.ServiceDNSRecordStatus {
	w.t.Helper()
	u, err := w.host.Peek(dnsrecord.ServiceDNSRecordGVR, "default", name)
	require.NoError(w.t, err)
	var rec dnsrecord.ServiceDNSRecord
	require.NoError(w.t, federation.FromUnstructured(u, &rec))
	return rec.Status
}

// ready returns the Ready condition as "status reason: message".
func ready(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Type == federation.ConditionReady {
			return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "no Ready condition"
}

// writes returns the host's write actions since the last call, as strings.
func (w *world) writes() []string {
	var out []string
	for _, a := range w.host.Actions() {
		switch a.Verb {
		case fake.VerbCreate, fake.VerbUpdate, fake.VerbUpdateStatus, fake.VerbDelete, fake.VerbPatch:
			out = append(out, a.String())
		}
	}
	w.host.ClearActions()
	return out
}
