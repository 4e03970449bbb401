package dnsrecord_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// The names of the record web in namespace default, domainRef fed, domain example.com.
const (
	wGlobal = "web.default.fed.svc.example.com"
	wEast   = "web.default.fed.svc.us-east-1.example.com"
	wEast1a = "web.default.fed.svc.us-east-1a.us-east-1.example.com"
	wEast1b = "web.default.fed.svc.us-east-1b.us-east-1.example.com"
	wEU     = "web.default.fed.svc.europe-west1.example.com"
	wEUb    = "web.default.fed.svc.europe-west1-b.europe-west1.example.com"
)

var webKey = federation.Key{Namespace: "default", Name: "web"}

// TestControllerFailover follows one federated Service through the life of its records: load
// balancers appear as the members' cloud assigns them, a cluster goes down and its names fall
// back to its region and the world, it recovers.
func TestControllerFailover(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "east-a", "east-b", "eu")
	w.serviceRecord("web", "{domainRef: fed}")
	c := w.controller(dnsrecord.Options{})

	step := func(name string, wantErr string, want []string) {
		t.Helper()
		res, err := c.Reconcile(w.ctx, webKey)
		if wantErr == "" {
			require.NoError(t, err, name)
			require.Equal(t, dnsrecord.DefaultResyncPeriod, res.RequeueAfter, name)
		} else {
			require.ErrorContains(t, err, wantErr, name)
			require.False(t, federation.IsTerminal(err), "%s: a failed member read is retried", name)
		}
		if diff := cmp.Diff(want, w.endpoints("service-web")); diff != "" {
			t.Errorf("%s: DNSEndpoint service-web (-want +got):\n%s", name, diff)
		}
	}

	step("no load balancer yet: every name falls back, the global name is not published", "", []string{
		wEUb + " CNAME " + wEU, wEU + " CNAME " + wGlobal, wEast + " CNAME " + wGlobal, wEast1a + " CNAME " + wEast, wEast1b + " CNAME " + wEast,
	})
	st := w.serviceStatus("web")
	require.Equal(t, "example.com", st.Domain)
	require.Equal(t, "True EndpointsWritten: 5 endpoint(s) from 3 cluster(s), 0 with a load balancer", ready(st.Conditions))

	w.fleet.Tick() // the members' cloud gives each Service a load balancer
	healthy := []string{
		wEUb + " A 198.18.3.1", wEU + " A 198.18.3.1", wGlobal + " A 198.18.1.1,198.18.2.1,198.18.3.1",
		wEast + " A 198.18.1.1,198.18.2.1", wEast1a + " A 198.18.1.1", wEast1b + " A 198.18.2.1",
	}
	step("load balancers assigned", "", healthy)
	st = w.serviceStatus("web")
	require.Equal(t, []dnsrecord.ClusterDNS{
		{Cluster: "east-a", Region: "us-east-1", Zones: []string{"us-east-1a"}, LoadBalancer: lb("198.18.1.1")},
		{Cluster: "east-b", Region: "us-east-1", Zones: []string{"us-east-1b"}, LoadBalancer: lb("198.18.2.1")},
		{Cluster: "eu", Region: "europe-west1", Zones: []string{"europe-west1-b"}, LoadBalancer: lb("198.18.3.1")},
	}, withoutIPMode(st.DNS))

	w.writes()
	step("nothing changed: nothing is written", "", healthy)
	require.Empty(t, w.writes())

	require.NoError(t, w.fleet.Partition("east-a"))
	step("east-a unreachable but still Ready: its last load balancer stays, the pass is retried", `cluster "east-a"`, healthy)
	require.Empty(t, w.writes(), "a failed read is not a failover")

	w.register() // the cluster monitor marks east-a not Ready
	step("east-a not Ready: its zone falls back to the region, the region and the world lose it", "", []string{
		wEUb + " A 198.18.3.1", wEU + " A 198.18.3.1", wGlobal + " A 198.18.2.1,198.18.3.1",
		wEast + " A 198.18.2.1", wEast1a + " CNAME " + wEast, wEast1b + " A 198.18.2.1",
	})
	require.Equal(t, dnsrecord.ClusterDNS{Cluster: "east-a", Region: "us-east-1", Zones: []string{"us-east-1a"}},
		w.serviceStatus("web").DNS[0], "a not-Ready cluster keeps its entry, without a load balancer")

	require.NoError(t, w.fleet.Heal("east-a"))
	w.register()
	step("east-a recovered", "", healthy)

	w.setReady("eu", "web", false)
	step("no ready endpoint behind eu's load balancer: europe falls back to the world", "", []string{
		wEUb + " CNAME " + wEU, wEU + " CNAME " + wGlobal, wGlobal + " A 198.18.1.1,198.18.2.1",
		wEast + " A 198.18.1.1,198.18.2.1", wEast1a + " A 198.18.1.1", wEast1b + " A 198.18.2.1",
	})

	require.NoError(t, w.host.Delete(w.ctx, dnsrecord.ServiceDNSRecordGVR, "default", "web", metav1.DeleteOptions{}))
	res, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter, "nothing left to resync")
	_, err = w.host.Peek(dnsrecord.DNSEndpointGVR, "default", "service-web")
	require.Error(t, err, "the DNSEndpoint goes with its record")
}

func withoutIPMode(dns []dnsrecord.ClusterDNS) []dnsrecord.ClusterDNS {
	for i := range dns {
		for j := range dns[i].LoadBalancer.Ingress {
			dns[i].LoadBalancer.Ingress[j].IPMode = nil
		}
	}
	return dns
}

func TestControllerAllowServiceWithoutEndpoints(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "eu")
	w.setReady("eu", "web", false)
	w.serviceRecord("web", "{domainRef: fed, allowServiceWithoutEndpoints: true, recordTTL: 60}")
	w.fleet.Tick()
	c := w.controller(dnsrecord.Options{})
	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Equal(t, []string{
		wEUb + " A 198.18.3.1", wEU + " A 198.18.3.1", wGlobal + " A 198.18.3.1",
		wEast + " CNAME " + wGlobal, wEast1a + " CNAME " + wEast, wEast1b + " CNAME " + wEast,
	}, w.endpoints("service-web"), "east-a and east-b have no Service: their zones fall back")
}

// TestControllerConditions covers the records that cannot be published: each gets a clear
// condition and no endpoints, and none stops the loop.
func TestControllerConditions(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(w *world)
		spec     string
		want     string
		terminal bool
		observed bool // status.domain and status.dns are filled all the same
	}{
		{
			name: "Service not federated",
			spec: "{domainRef: fed}",
			want: "False ServiceNotFederated: no FederatedService default/web on the host: the Service is not federated, so nothing is published",
		},
		{
			name:  "Domain missing",
			setup: func(w *world) { w.federateService("web", "eu") },
			spec:  "{domainRef: elsewhere}",
			want:  "False DomainNotFound: Domain fedkit-system/elsewhere (spec.domainRef) does not exist",
		},
		{
			name:     "empty domainRef",
			setup:    func(w *world) { w.federateService("web", "eu") },
			spec:     "{domainRef: ''}",
			want:     "False InvalidRecord: dnsrecord: invalid record: ServiceDNSRecord default/web: spec.domainRef is empty; the DNSEndpoint keeps its last records",
			terminal: true,
		},
		{
			name:     "a dnsPrefix that is not a DNS name",
			setup:    func(w *world) { w.federateService("web", "eu") },
			spec:     "{domainRef: fed, dnsPrefix: 'my shop'}",
			want:     `False InvalidRecord: dnsrecord: invalid record: ServiceDNSRecord default/web: spec.dnsPrefix "my shop": label "my shop" has the character ' '; only letters, digits, '-' and '_' are allowed; the DNSEndpoint keeps its last records`,
			terminal: true,
			observed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			if tt.setup != nil {
				tt.setup(w)
			}
			w.serviceRecord("web", tt.spec)
			c := w.controller(dnsrecord.Options{})
			res, err := c.Reconcile(w.ctx, webKey)
			if tt.terminal {
				require.True(t, federation.IsTerminal(err), "want a terminal error, got %v", err)
				require.ErrorIs(t, err, dnsrecord.ErrInvalidRecord)
			} else {
				require.NoError(t, err)
				require.Equal(t, dnsrecord.DefaultResyncPeriod, res.RequeueAfter, "the missing object is looked for again")
				require.Empty(t, w.endpoints("service-web"), "no endpoints")
			}
			st := w.serviceStatus("web")
			require.Equal(t, tt.want, ready(st.Conditions))
			if tt.observed {
				require.Equal(t, "example.com", st.Domain)
				require.Len(t, st.DNS, 3)
			} else {
				require.Empty(t, st.DNS)
				require.Empty(t, st.Domain)
			}
		})
	}
}

// TestControllerWithdrawsRecords: records published before their Domain or their
// FederatedService went away are withdrawn (the DNSEndpoint stays, empty, so external-dns
// deletes the names), with the condition saying why; they come back with what was missing.
func TestControllerWithdrawsRecords(t *testing.T) {
	for _, tc := range []struct {
		name, reason      string
		gvr               schema.GroupVersionResource
		namespace, object string // the object that goes away
	}{
		{"the Domain is deleted", dnsrecord.ReasonDomainNotFound, dnsrecord.DomainGVR, "fedkit-system", "fed"},
		{"the Service is no longer federated", dnsrecord.ReasonServiceNotFederated, federation.ServiceType.FederatedGVR(), "default", "web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.federateService("web", "eu")
			w.fleet.Tick()
			w.serviceRecord("web", "{domainRef: fed}")
			c := w.controller(dnsrecord.Options{})
			_, err := c.Reconcile(w.ctx, webKey)
			require.NoError(t, err)
			published := w.endpoints("service-web")
			require.Contains(t, published, wGlobal+" A 198.18.3.1")

			gone, err := w.host.Peek(tc.gvr, tc.namespace, tc.object)
			require.NoError(t, err)
			require.NoError(t, w.host.Delete(w.ctx, tc.gvr, tc.namespace, tc.object, metav1.DeleteOptions{}))
			_, err = c.Reconcile(w.ctx, webKey)
			require.NoError(t, err)
			require.Empty(t, w.endpoints("service-web"), "records of a name nobody serves any more")
			require.True(t, strings.HasPrefix(ready(w.serviceStatus("web").Conditions), "False "+tc.reason+": "),
				ready(w.serviceStatus("web").Conditions))

			gone.SetResourceVersion("")
			gone.SetUID("")
			w.create(w.host, tc.gvr, gone)
			_, err = c.Reconcile(w.ctx, webKey)
			require.NoError(t, err)
			require.Equal(t, published, w.endpoints("service-web"))
		})
	}
}

// TestControllerKeepsRecordsOnResolveFailure: a hostname that does not resolve keeps the last
// records and retries.
func TestControllerResolveFailure(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "eu")
	w.fleet.Tick()
	w.serviceRecord("web", "{domainRef: fed}")
	c := w.controller(dnsrecord.Options{})
	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	before := w.endpoints("service-web")

	require.NoError(t, w.member("eu").Drift(servicesGVR, "default", "web", func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": "lb-eu.elb.example.net"}}}}
	}))
	_, err = c.Reconcile(w.ctx, webKey)
	require.ErrorIs(t, err, dnsrecord.ErrResolve)
	require.False(t, federation.IsTerminal(err))
	require.Equal(t, before, w.endpoints("service-web"), "the last records stay")
	require.Contains(t, ready(w.serviceStatus("web").Conditions),
		`False ResolveFailed: dnsrecord: cannot resolve load-balancer hostname: ServiceDNSRecord default/web: cluster "eu": hostname "lb-eu.elb.example.net"`)

	w.resolver["lb-eu.elb.example.net"] = []string{"203.0.113.7"}
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Contains(t, w.endpoints("service-web"), wGlobal+" A 203.0.113.7")
}

// TestControllerDNSEndpointOwnership: a DNSEndpoint of the record's name that belongs to
// something else is left alone; one left by an earlier record of the same name is adopted.
func TestControllerDNSEndpointOwnership(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "eu")
	w.fleet.Tick()
	foreign := w.apply(w.host, dnsrecord.DNSEndpointGVR, `{apiVersion: externaldns.k8s.io/v1alpha1, kind: DNSEndpoint,
	  metadata: {name: service-web, namespace: default},
	  spec: {endpoints: [{dnsName: hand.example.com, recordType: A, targets: [192.0.2.1]}]}}`)
	w.serviceRecord("web", "{domainRef: fed}")
	c := w.controller(dnsrecord.Options{})
	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Equal(t, "False DNSEndpointConflict: DNSEndpoint default/service-web exists and is not owned by ServiceDNSRecord default/web; delete it or rename the record",
		ready(w.serviceStatus("web").Conditions))
	require.Equal(t, []string{"hand.example.com A 192.0.2.1"}, w.endpoints("service-web"))

	require.NoError(t, w.host.Delete(w.ctx, dnsrecord.DNSEndpointGVR, "default", foreign.GetName(), metav1.DeleteOptions{}))
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Contains(t, w.endpoints("service-web"), wGlobal+" A 198.18.3.1")

	// The record is deleted and created again while the controller is away: the new one
	// adopts the DNSEndpoint its predecessor left.
	old, err := w.host.Peek(dnsrecord.ServiceDNSRecordGVR, "default", "web")
	require.NoError(t, err)
	require.NoError(t, w.host.Delete(w.ctx, dnsrecord.ServiceDNSRecordGVR, "default", "web", metav1.DeleteOptions{}))
	w.serviceRecord("web", "{domainRef: fed, recordTTL: 60}")
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	de, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "default", "service-web")
	require.NoError(t, err)
	refs := de.GetOwnerReferences()
	require.Len(t, refs, 1)
	require.NotEqual(t, old.GetUID(), refs[0].UID)
	rec, err := w.host.Peek(dnsrecord.ServiceDNSRecordGVR, "default", "web")
	require.NoError(t, err)
	require.Equal(t, rec.GetUID(), refs[0].UID)
	require.True(t, *refs[0].Controller)
	require.Equal(t, "True EndpointsWritten: 6 endpoint(s) from 3 cluster(s), 1 with a load balancer", ready(w.serviceStatus("web").Conditions))
}

// TestControllerDeletion: a record being deleted (held by a finalizer of someone else's)
// has its DNSEndpoint deleted at once; a DNSEndpoint whose record is gone is deleted.
func TestControllerDeletion(t *testing.T) {
	w := newWorld(t)
	guard := fedtest.NewDeleteGuard() // the controller's deletes go through the gate
	guard.Watch(w.host, "")
	user := fedtest.AsUser(w.ctx)
	w.federateService("web", "eu")
	w.serviceRecord("web", "{domainRef: fed}")
	c := w.controller(dnsrecord.Options{})
	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)

	rec, err := w.host.Peek(dnsrecord.ServiceDNSRecordGVR, "default", "web")
	require.NoError(t, err)
	rec.SetFinalizers([]string{"example.com/hold"})
	_, err = w.host.Update(w.ctx, dnsrecord.ServiceDNSRecordGVR, rec)
	require.NoError(t, err)
	require.NoError(t, w.host.Delete(user, dnsrecord.ServiceDNSRecordGVR, "default", "web", metav1.DeleteOptions{}))
	w.writes()
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Equal(t, []string{"delete externaldns.k8s.io/v1alpha1/dnsendpoints default/service-web"}, w.writes(),
		"the DNSEndpoint is deleted while its record is being deleted; the record is not written")

	// A DNSEndpoint left behind by a record that is gone (the controller was away when it was
	// deleted, and no garbage collector runs) goes on the record's next pass.
	w.serviceRecord("gone", "{domainRef: fed}")
	_, err = c.Reconcile(w.ctx, federation.Key{Namespace: "default", Name: "gone"})
	require.NoError(t, err)
	require.NoError(t, w.host.Delete(user, dnsrecord.ServiceDNSRecordGVR, "default", "gone", metav1.DeleteOptions{}))
	_, err = c.Reconcile(w.ctx, federation.Key{Namespace: "default", Name: "gone"})
	require.NoError(t, err)
	_, err = w.host.Peek(dnsrecord.DNSEndpointGVR, "default", "service-gone")
	require.Error(t, err)
	guard.Check(t, "github.com/fedkit/fedkit/dnsrecord")
}

func TestJoinedErrorsStayRetryable(t *testing.T) {
	// A terminal failure of the ServiceDNSRecord and a retryable one of the IngressDNSRecord
	// of the same key: the key must be retried.
	w := newWorld(t)
	w.federateService("web", "eu")
	w.serviceRecord("web", "{domainRef: fed, recordTTL: -5}")
	w.apply(w.host, federation.IngressType.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedIngress,
	  metadata: {name: web, namespace: default}, spec: {template: {}, placement: {clusterSelector: {}}}}`)
	w.apply(w.host, dnsrecord.IngressDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: IngressDNSRecord,
	  metadata: {name: web, namespace: default}, spec: {hosts: [shop.example.com]}}`)
	w.apply(w.member("eu"), ingressesGVR, `{apiVersion: networking.k8s.io/v1, kind: Ingress,
	  metadata: {name: web, namespace: default, labels: {federation.k8s.io/managed-by: fedkit}},
	  spec: {rules: [{host: shop.example.com}]}}`)
	require.NoError(t, w.member("eu").Drift(ingressesGVR, "default", "web", func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": "nowhere.example.net"}}}}
	}))
	c := w.controller(dnsrecord.Options{})
	_, err := c.Reconcile(w.ctx, webKey)
	require.ErrorIs(t, err, dnsrecord.ErrResolve)
	require.False(t, federation.IsTerminal(err))
	require.ErrorContains(t, err, "spec.recordTTL -5 is negative", "the terminal failure is still reported")
	require.False(t, errors.Is(err, federation.ErrTerminal))
}

// TestControllerIdentity: the DNS loop publishes only the member Services and Ingresses that
// carry its Options.Identity in federation.ManagedByLabel, as sync and the Collector count
// only those: another federation's Service of the same name, over the same fleet, is not
// this federation's to publish.
func TestControllerIdentity(t *testing.T) {
	for _, tt := range []struct {
		name     string
		identity string
		want     []string
	}{
		{"default identity: eu's Service belongs to the federation blue and does not count", "", []string{
			wEUb + " CNAME " + wEU, wEU + " CNAME " + wGlobal, wGlobal + " A 198.18.1.1,198.18.2.1",
			wEast + " A 198.18.1.1,198.18.2.1", wEast1a + " A 198.18.1.1", wEast1b + " A 198.18.2.1",
		}},
		{"identity blue: only eu's Service counts", "blue", []string{
			wEUb + " A 198.18.3.1", wEU + " A 198.18.3.1", wGlobal + " A 198.18.3.1",
			wEast + " CNAME " + wGlobal, wEast1a + " CNAME " + wEast, wEast1b + " CNAME " + wEast,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.federateService("web", "east-a", "east-b", "eu")
			w.fleet.Tick()
			require.NoError(t, w.member("eu").Drift(servicesGVR, "default", "web", func(u *unstructured.Unstructured) {
				u.SetLabels(map[string]string{federation.ManagedByLabel: "blue"})
			}))
			w.serviceRecord("web", "{domainRef: fed}")
			w.federateIngress("shop", map[string]string{"east-a": "198.51.100.1", "eu": "198.51.100.3"})
			require.NoError(t, w.member("eu").Drift(ingressesGVR, "default", "shop", func(u *unstructured.Unstructured) {
				u.SetLabels(map[string]string{federation.ManagedByLabel: "blue"})
			}))
			w.apply(w.host, dnsrecord.IngressDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: IngressDNSRecord,
			  metadata: {name: shop, namespace: default}, spec: {hosts: [shop.example.com]}}`)

			c := w.controller(dnsrecord.Options{Identity: tt.identity})
			_, err := c.Reconcile(w.ctx, webKey)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, w.endpoints("service-web")); diff != "" {
				t.Errorf("service-web (-want +got):\n%s", diff)
			}
			_, err = c.Reconcile(w.ctx, federation.Key{Namespace: "default", Name: "shop"})
			require.NoError(t, err)
			wantIngress := []string{"shop.example.com A 198.51.100.1"}
			if tt.identity == "blue" {
				wantIngress = []string{"shop.example.com A 198.51.100.3"}
			}
			if diff := cmp.Diff(wantIngress, w.endpoints("ingress-shop")); diff != "" {
				t.Errorf("ingress-shop (-want +got):\n%s", diff)
			}
		})
	}
}

func (w *world) ingressStatus(name string) dnsrecord.IngressDNSRecordStatus {
	w.t.Helper()
	var rec dnsrecord.IngressDNSRecord
	require.NoError(w.t, federation.FromUnstructured(must(w.host.Peek(dnsrecord.IngressDNSRecordGVR, "default", name)), &rec))
	return rec.Status
}

// TestControllerIngressDomains: an IngressDNSRecord publishes only hosts under a Domain of
// Options.DomainNamespace, where only administrators write; a host under no such Domain (one
// a Domain in a tenant's namespace names does not count) is refused with a condition naming
// it, and the record's other hosts are published.
func TestControllerIngressDomains(t *testing.T) {
	w := newWorld(t)
	w.apply(w.host, namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: tenant}}`)
	w.apply(w.host, dnsrecord.DomainGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: Domain,
	  metadata: {name: mine, namespace: tenant}, domain: bank.example}`)
	w.federateIngress("web", map[string]string{"east-a": "198.51.100.1"})
	w.apply(w.host, dnsrecord.IngressDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: IngressDNSRecord,
	  metadata: {name: web, namespace: default},
	  spec: {hosts: [shop.example.com, "*.Example.com", example.com, login.bank.example, example.com.bank.example, notexample.com]}}`)
	c := w.controller(dnsrecord.Options{})

	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	if diff := cmp.Diff([]string{
		"*.example.com A 198.51.100.1", "example.com A 198.51.100.1", "shop.example.com A 198.51.100.1",
	}, w.endpoints("ingress-web")); diff != "" {
		t.Errorf("only the hosts under example.com are published (-want +got):\n%s", diff)
	}
	require.Equal(t, `False HostNotInDomain: spec.hosts[3] "login.bank.example", spec.hosts[4] "example.com.bank.example", spec.hosts[5] "notexample.com": `+
		`not under a Domain in fedkit-system, so not published; 3 endpoint(s) from 3 cluster(s), 1 with a load balancer`,
		ready(w.ingressStatus("web").Conditions))

	w.apply(w.host, dnsrecord.DomainGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: Domain,
	  metadata: {name: bank, namespace: fedkit-system}, domain: bank.example.}`)
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Equal(t, []string{
		"*.example.com A 198.51.100.1", "example.com A 198.51.100.1", "example.com.bank.example A 198.51.100.1",
		"login.bank.example A 198.51.100.1", "shop.example.com A 198.51.100.1",
	}, w.endpoints("ingress-web"), "an administrator's Domain allows the bank.example hosts; notexample.com stays out")
	require.Equal(t, `False HostNotInDomain: spec.hosts[5] "notexample.com": not under a Domain in fedkit-system, so not published; 5 endpoint(s) from 3 cluster(s), 1 with a load balancer`,
		ready(w.ingressStatus("web").Conditions))
}
