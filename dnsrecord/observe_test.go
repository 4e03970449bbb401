package dnsrecord_test

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
)

// TestEvents: the DNS loop records an event when a DNSEndpoint is written, when its write
// fails (once, not on every retry) and when the Ready condition turns False, never on a pass
// that changed nothing.
func TestEvents(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "eu")
	w.serviceRecord("web", "{domainRef: fed}")
	rec := &fake.Recorder{}
	c := w.controller(dnsrecord.Options{Events: rec})
	const obj = "ServiceDNSRecord default/web "
	pass := func(wantErr bool, want ...string) {
		t.Helper()
		rec.Reset()
		_, err := c.Reconcile(w.ctx, webKey)
		require.Equal(t, wantErr, err != nil, "%v", err)
		var got []string
		for _, e := range rec.Events() {
			got = append(got, e.String())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	}

	pass(false, "Normal "+obj+"EndpointsWritten: DNSEndpoint service-web: 5 endpoint(s) from 3 cluster(s), 0 with a load balancer")
	pass(false)

	w.fleet.Tick() // eu's Service gets a load balancer: the records change
	w.host.FailOn(fake.VerbUpdate, apierrors.NewServiceUnavailable("etcd is busy"), 2)
	pass(true, "Warning "+obj+"DNSEndpointWriteFailed: dnsrecord: update DNSEndpoint default/service-web: etcd is busy")
	pass(true) // the same failure again: no new event
	pass(false, "Normal "+obj+"EndpointsWritten: DNSEndpoint service-web: 6 endpoint(s) from 3 cluster(s), 1 with a load balancer")
	pass(false)

	require.NoError(t, w.host.Delete(w.ctx, dnsrecord.DomainGVR, "fedkit-system", "fed", metav1.DeleteOptions{}))
	pass(false,
		"Normal "+obj+"EndpointsWritten: DNSEndpoint service-web: Domain fedkit-system/fed (spec.domainRef) does not exist",
		"Warning "+obj+"DomainNotFound: Domain fedkit-system/fed (spec.domainRef) does not exist")
	pass(false)
}

// TestReconcileLogsWithContext: every line a pass logs names the loop, the record kind and
// the object, nested calls included.
func TestReconcileLogsWithContext(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "eu")
	w.serviceRecord("web", "{domainRef: fed}")
	c := w.controller(dnsrecord.Options{Events: &fake.Recorder{}})
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	_, err := c.Reconcile(logr.NewContext(w.ctx, log), webKey)
	require.NoError(t, err)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		for _, want := range []string{`"loop"="dns"`, `"object"="default/web"`, `"type"="ServiceDNSRecord"`} {
			require.Contains(t, l, want)
		}
	}
}
