package dnsrecord_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestMain fails the package when a test leaves goroutines behind: Run must join everything
// it starts.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun: Run reacts to the records, the Clusters, the DNSEndpoints and the Domains on the
// host, and reads the host from its caches. Its clock never moves, so every pass is caused by
// a change.
func TestRun(t *testing.T) {
	w := newWorld(t)
	w.federateService("web", "east-a", "east-b", "eu")
	w.fleet.Tick()
	w.serviceRecord("web", "{domainRef: fed}")
	c := w.controller(dnsrecord.Options{Registerer: prometheus.NewRegistry()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	has := func(name, line string) func() bool {
		return func() bool {
			u, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "default", name)
			if err != nil {
				return false
			}
			var de dnsrecord.DNSEndpoint
			if err := runtimeDecode(u, &de); err != nil {
				return false
			}
			for _, l := range lines(de.Spec.Endpoints) {
				if l == line {
					return true
				}
			}
			return false
		}
	}
	fedtest.Eventually(t, "the record is published", has("service-web", wEast1a+" A 198.18.1.1"))

	// A member's load balancer changes: the member cache's notification reconciles the
	// record at once (the clock never moves, so no periodic pass can).
	eu, _ := w.fleet.Member("eu")
	svc, err := eu.Peek(federation.ServiceType.TargetGVR(), "default", "web")
	require.NoError(t, err)
	original, _, _ := unstructured.NestedSlice(svc.Object, "status", "loadBalancer", "ingress")
	require.NoError(t, eu.Drift(federation.ServiceType.TargetGVR(), "default", "web", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"ip": "198.18.9.9"}}, "status", "loadBalancer", "ingress")
	}))
	fedtest.Eventually(t, "a member's new load balancer IP is published at once", func() bool {
		u, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "default", "service-web")
		if err != nil {
			return false
		}
		var de dnsrecord.DNSEndpoint
		if err := runtimeDecode(u, &de); err != nil {
			return false
		}
		for _, l := range lines(de.Spec.Endpoints) {
			if strings.Contains(l, "198.18.9.9") {
				return true
			}
		}
		return false
	})
	require.NoError(t, eu.Drift(federation.ServiceType.TargetGVR(), "default", "web", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, original, "status", "loadBalancer", "ingress")
	}))
	fedtest.Eventually(t, "and the old one again", has("service-web", wEast1a+" A 198.18.1.1"))

	w.host.ClearActions()
	require.NoError(t, w.fleet.Partition("east-a"))
	w.register()
	fedtest.Eventually(t, "east-a's zone falls back when its Cluster is not Ready", has("service-web", wEast1a+" CNAME "+wEast))
	for _, a := range w.host.Actions() {
		// Fleet.Register, the test's cluster monitor, gets the Clusters it updates.
		testsOwn := a.Verb == fake.VerbGet && a.Resource == federation.ClusterGVR
		require.True(t, testsOwn || (a.Verb != fake.VerbGet && a.Verb != fake.VerbList), "a pass reads the host from Run's caches: %s", a)
	}

	require.NoError(t, w.host.Delete(w.ctx, dnsrecord.DNSEndpointGVR, "default", "service-web", metav1.DeleteOptions{}))
	fedtest.Eventually(t, "a DNSEndpoint deleted behind the controller's back is written again", has("service-web", wEast1a+" CNAME "+wEast))

	require.NoError(t, w.host.Drift(dnsrecord.DomainGVR, "fedkit-system", "fed", func(u *unstructured.Unstructured) {
		u.Object["domain"] = "example.org"
	}))
	fedtest.Eventually(t, "a Domain change renames the records", has("service-web", "web.default.fed.svc.example.org A 198.18.2.1,198.18.3.1"))

	require.NoError(t, w.host.Delete(w.ctx, dnsrecord.ServiceDNSRecordGVR, "default", "web", metav1.DeleteOptions{}))
	fedtest.Eventually(t, "the DNSEndpoint goes with its record", func() bool {
		_, err := w.host.Peek(dnsrecord.DNSEndpointGVR, "default", "service-web")
		return err != nil
	})
}

func runtimeDecode(u *unstructured.Unstructured, into *dnsrecord.DNSEndpoint) error {
	return federation.FromUnstructured(u, into)
}

// TestRunWithoutCRDs: Run fails, naming the resource, when the host does not serve what it
// watches, instead of waiting forever.
func TestRunCacheSyncTimeout(t *testing.T) {
	host := fake.NewCluster("host")
	host.FailOn(fake.VerbList, apierrors.NewNotFound(schema.GroupResource{Group: "multiclusterdns.federation.k8s.io", Resource: "servicednsrecords"}, ""), 0)
	c, err := dnsrecord.New(host, fake.NewFleet(), dnsrecord.Options{CacheSyncTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	err = c.Run(context.Background())
	require.ErrorContains(t, err, "dnsrecord: ")
	require.ErrorContains(t, err, "cache did not sync")
}

func TestNewRejectsAnInvalidShard(t *testing.T) {
	_, err := dnsrecord.New(fake.NewHost("host"), fake.NewFleet(), dnsrecord.Options{Shard: federation.Shard{Index: 5, Count: 4}})
	require.ErrorIs(t, err, dnsrecord.ErrInvalidOptions)
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "dnsrecord: New: dnsrecord: invalid options: Options.Shard")
}
