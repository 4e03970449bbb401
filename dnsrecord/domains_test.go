package dnsrecord_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

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
