package dnsrecord_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// otherShop creates, in namespace other, a federated Ingress shop with a load balancer in eu
// and its IngressDNSRecord asking for hosts.
func (w *world) otherShop(hosts string) {
	w.t.Helper()
	w.apply(w.host, namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: other}}`)
	w.apply(w.host, federation.IngressType.FederatedGVR(), `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedIngress,
	  metadata: {name: shop, namespace: other}, spec: {template: {}, placement: {clusterSelector: {}}}}`)
	w.apply(w.member("eu"), namespaceGVR, `{apiVersion: v1, kind: Namespace, metadata: {name: other}}`)
	w.apply(w.member("eu"), ingressesGVR, `{apiVersion: networking.k8s.io/v1, kind: Ingress,
	  metadata: {name: shop, namespace: other, labels: {"federation.k8s.io/managed-by": fedkit}}, spec: {}}`)
	require.NoError(w.t, w.member("eu").Drift(ingressesGVR, "other", "shop", func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "203.0.113.66"}}}}
	}))
	w.apply(w.host, dnsrecord.IngressDNSRecordGVR, `{apiVersion: multiclusterdns.federation.k8s.io/v1alpha1, kind: IngressDNSRecord,
	  metadata: {name: shop, namespace: other}, spec: {hosts: `+hosts+`}}`)
}

// shopEndpoints returns the records of other/shop's DNSEndpoint, nil while there is none.
func (w *world) shopEndpoints() []string {
	u, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "other", "ingress-shop")
	if err != nil {
		return nil
	}
	var de dnsrecord.DNSEndpoint
	require.NoError(w.t, federation.FromUnstructured(u, &de))
	return lines(de.Spec.Endpoints)
}

// TestRunNameConflicts: under Run, a record that lost names to an older one gets them at once
// when the older one lets them go (the clock never moves: no resync can do it).
func TestRunNameConflicts(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "east-a", "east-b", "eu")
	w.fleet.Tick()
	w.serviceRecord("web", "{domainRef: fed, dnsPrefix: www}")
	reg := prometheus.NewRegistry()
	c := w.controller(dnsrecord.Options{Registerer: reg})
	_, err := c.Reconcile(w.ctx, webKey) // the older record has its status before Run starts
	require.NoError(t, err)
	w.clock.Step(time.Minute)
	w.otherShop("[www.example.com, shop.example.com]")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	fedtest.Eventually(t, "the younger record publishes only its own host", func() bool {
		return slices.Equal(w.shopEndpoints(), []string{"shop.example.com A 203.0.113.66"})
	})
	// A pass over shop that wrote nothing (after the one that did, whose status write
	// queued it): nothing of shop's own is left to reconcile it.
	fedtest.Eventually(t, "shop is settled", func() bool {
		return metricValues(t, reg)[`fedkit_reconciles_total{loop="dns",outcome="unchanged",type="IngressDNSRecord"}`] >= 1
	})
	require.NoError(t, w.host.Drift(dnsrecord.ServiceDNSRecordGVR, "default", "web", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "shop-front", "spec", "dnsPrefix")
	}))
	fedtest.Eventually(t, "the alias the older record gave up is published by the younger one", func() bool {
		return slices.Equal(w.shopEndpoints(), []string{"shop.example.com A 203.0.113.66", "www.example.com A 203.0.113.66"})
	})
}

// TestControllerNameConflicts: two records in different namespaces that would publish the
// same name: the older keeps it, the other publishes the rest and says which names it lost
// to whom. Neither an Ingress host nor a dnsPrefix can take a name another namespace owns,
// and a lost name comes back once its owner lets it go.
func TestControllerNameConflicts(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "east-a", "east-b", "eu")
	w.fleet.Tick()
	w.serviceRecord("web", "{domainRef: fed, dnsPrefix: www}")
	c := w.controller(dnsrecord.Options{})
	_, err := c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Contains(t, w.endpoints("service-web"), "www.example.com CNAME "+wGlobal)

	// A tenant in namespace other, a minute later, asks for the alias and for default's
	// global name, with its own load balancer.
	w.clock.Step(time.Minute)
	w.otherShop("[WWW.example.com, shop.example.com, " + wGlobal + "]")
	shopKey := federation.Key{Namespace: "other", Name: "shop"}
	_, err = c.Reconcile(w.ctx, shopKey)
	require.NoError(t, err)
	shop := func() ([]string, string) {
		u, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "other", "ingress-shop")
		require.NoError(t, err)
		var de dnsrecord.DNSEndpoint
		require.NoError(t, federation.FromUnstructured(u, &de))
		var rec dnsrecord.IngressDNSRecord
		require.NoError(t, federation.FromUnstructured(must(w.host.Peek(dnsrecord.IngressDNSRecordGVR, "other", "shop")), &rec))
		return lines(de.Spec.Endpoints), ready(rec.Status.Conditions)
	}
	eps, cond := shop()
	if diff := cmp.Diff([]string{"shop.example.com A 203.0.113.66"}, eps); diff != "" {
		t.Errorf("the younger record publishes only what nobody older owns (-want +got):\n%s", diff)
	}
	require.Equal(t, `False NameConflict: `+wGlobal+`, www.example.com: published by ServiceDNSRecord default/web, which is older, so not published here; `+
		`1 endpoint(s) from 3 cluster(s), 1 with a load balancer`, cond)

	// The older record is untouched by the younger one.
	w.writes()
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	require.Empty(t, w.writes())
	require.Equal(t, "True EndpointsWritten: 7 endpoint(s) from 3 cluster(s), 3 with a load balancer", ready(w.serviceStatus("web").Conditions))

	// Once the owner is gone, the names are free.
	require.NoError(t, w.host.Delete(w.ctx, dnsrecord.ServiceDNSRecordGVR, "default", "web", metav1.DeleteOptions{}))
	_, err = c.Reconcile(w.ctx, webKey)
	require.NoError(t, err)
	_, err = c.Reconcile(w.ctx, shopKey)
	require.NoError(t, err)
	eps, cond = shop()
	require.Equal(t, []string{"shop.example.com A 203.0.113.66", wGlobal + " A 203.0.113.66", "www.example.com A 203.0.113.66"}, eps)
	require.Equal(t, "True EndpointsWritten: 3 endpoint(s) from 3 cluster(s), 1 with a load balancer", cond)
}
