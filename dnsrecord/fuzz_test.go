package dnsrecord_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/dnsrecord"
)

// FuzzServiceEndpoints feeds arbitrary names, regions, zones and load-balancer addresses to
// ServiceEndpoints: it never panics; an error wraps ErrInvalidRecord or ErrResolve; a result
// has valid record types, no empty targets, lower-case names (DNS names compare without
// regard to case, RFC 4343) of at most 253 characters under the lower-cased domain, and is
// the same when computed twice.
//
//	go test ./dnsrecord -run '^$' -fuzz FuzzServiceEndpoints -fuzztime 60s
func FuzzServiceEndpoints(f *testing.F) {
	f.Add("web", "shop", "fed", "example.com", "", "", "us-east-1", "us-east-1a", "10.0.0.1", "lb.example.net", int64(0))
	f.Add("web", "shop", "fed", "example.com.", "www", "ext", "eu", "", "::1", "", int64(30))
	f.Add("-bad", "shop", "fed", "example.com", "", "", "Us_East", "a..b", "300.1.1.1", "", int64(-1))
	f.Add("web", "shop", "fed", strings.Repeat("a.", 130)+"com", "", "", "r", "z", "1.2.3.4", "", int64(1))
	f.Add("web", "shop", "", "example.com", "*", "", "r", "z", "", "unknown.example", int64(5))
	f.Fuzz(func(t *testing.T, name, ns, domainRef, domain, prefix, external, region, zone, ip, host string, ttl int64) {
		rec := &dnsrecord.ServiceDNSRecord{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       dnsrecord.ServiceDNSRecordSpec{DomainRef: domainRef, DNSPrefix: prefix, ExternalName: external, RecordTTL: ttl},
			Status: dnsrecord.ServiceDNSRecordStatus{Domain: domain, DNS: []dnsrecord.ClusterDNS{{
				Cluster: "c1", Region: region, Zones: []string{zone},
				LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: ip}, {Hostname: host}}},
			}}},
		}
		resolver := fuzzResolver{"lb.example.net": {"192.0.2.7", "2001:db8::7"}}
		got, err := dnsrecord.ServiceEndpoints(context.Background(), rec, resolver)
		if err != nil {
			if !errors.Is(err, dnsrecord.ErrInvalidRecord) && !errors.Is(err, dnsrecord.ErrResolve) {
				t.Fatalf("error %v wraps neither ErrInvalidRecord nor ErrResolve", err)
			}
			return
		}
		checkEndpoints(t, strings.ToLower(strings.TrimSuffix(domain, ".")), got)
		again, err := dnsrecord.ServiceEndpoints(context.Background(), rec, resolver)
		if err != nil || len(again) != len(got) {
			t.Fatalf("second call differs: %v, %d vs %d endpoints", err, len(again), len(got))
		}
	})
}

// checkEndpoints holds what every computed record set must satisfy; domain is lower-case.
func checkEndpoints(t *testing.T, domain string, eps []dnsrecord.Endpoint) {
	t.Helper()
	for _, ep := range eps {
		if ep.DNSName != strings.ToLower(ep.DNSName) {
			t.Fatalf("name %q is not lower-case", ep.DNSName)
		}
		if len(ep.DNSName) > 253 {
			t.Fatalf("name of %d characters: %q", len(ep.DNSName), ep.DNSName)
		}
		if !strings.HasSuffix(ep.DNSName, "."+domain) {
			t.Fatalf("name %q is not under the domain %q", ep.DNSName, domain)
		}
		switch ep.RecordType {
		case "A", "AAAA", "CNAME":
		default:
			t.Fatalf("%s: record type %q", ep.DNSName, ep.RecordType)
		}
		if len(ep.Targets) == 0 {
			t.Fatalf("%s %s has no targets", ep.DNSName, ep.RecordType)
		}
		for _, target := range ep.Targets {
			if target == "" {
				t.Fatalf("%s %s has an empty target", ep.DNSName, ep.RecordType)
			}
		}
		if ep.RecordTTL <= 0 {
			t.Fatalf("%s: TTL %d", ep.DNSName, ep.RecordTTL)
		}
	}
}

// fuzzResolver resolves the hosts it knows and fails on any other.
type fuzzResolver map[string][]string

func (r fuzzResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if addrs, ok := r[host]; ok {
		return addrs, nil
	}
	return nil, errors.New("no such host")
}
