package dnsrecord_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

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
