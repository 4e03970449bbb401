package dnsrecord

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/fedkit/fedkit/federation"
)

// DefaultTTL is the TTL, in seconds, of records whose recordTTL is 0: KubeFed's, short enough
// that a failover reaches clients within minutes.
const DefaultTTL = 180

// LabelServiceName is the endpoint label that names the Service when spec.externalName
// replaces its name in the DNS names.
const LabelServiceName = "serviceName"

// Resolver looks up the IP addresses of a load balancer's hostname (AWS's load balancers
// have a hostname, not an IP). *net.Resolver satisfies it; tests pass a fake one.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// ServiceEndpoints computes the DNS records of a ServiceDNSRecord from its metadata, spec and
// status alone; the only I/O is r's, for load balancers that have a hostname instead of an
// IP. The controller calls it after filling the status; embedders and tests can call it on
// any record. It returns no records while status.domain is empty.
//
// The names, for a record web in namespace shop with domainRef fed and domain example.com:
//
//	web.shop.fed.svc.example.com                      global
//	web.shop.fed.svc.<region>.example.com             one per region
//	web.shop.fed.svc.<zone>.<region>.example.com      one per zone of a region
//	<dnsPrefix>.example.com                           when spec.dnsPrefix is set
//
// spec.externalName replaces "web", and every endpoint then carries the label
// serviceName=web. Each entry of status.dns (a cluster) contributes its load balancer's IPs,
// and the hostnames' addresses through r, to the global name, to its region's name and to
// each of its zones' names. A cluster without a region contributes to the global name only.
//
// A name with targets is an A record of its sorted, unique IPv4 addresses and an AAAA record
// of its IPv6 ones. A name without targets is a CNAME to the next level up: a zone name to
// its region name, a region name to the global name; so the clients of a zone whose cluster
// lost its load balancer (or went not Ready) are sent to the rest of the region, or the rest
// of the world. A global name without targets is dropped; the CNAMEs that point at it then
// answer NXDOMAIN, as no record would. dnsPrefix's name is a CNAME to the global name.
//
// Names are lower-cased (DNS names compare without regard to case, RFC 4343), so names
// that differ only in case are one name. Records of one name from several clusters merge:
// address records win over a CNAME (some cluster of the zone can answer) and their targets
// unite. Every record has the TTL spec.recordTTL, or [DefaultTTL] when it is 0; a TTL above
// [MaxTTL] is refused (RFC 2181). The result is sorted by name, then record
// type (A, AAAA, CNAME), with sorted targets, so equal inputs give equal outputs.
//
// Errors wrap [ErrInvalidRecord] (a part that is not a DNS label, a name over 253
// characters, an IP that does not parse, a negative TTL or one above MaxTTL) or [ErrResolve] (naming the
// hostname and the cluster); either names the record and the field.
func ServiceEndpoints(ctx context.Context, rec *ServiceDNSRecord, r Resolver) ([]Endpoint, error) {
	b, what, ttl, labels, err := serviceNames(ctx, rec, r)
	if err != nil || b == nil {
		return nil, err
	}
	return b.endpoints(what, ttl, labels)
}

// ServiceNames returns every name [ServiceEndpoints] publishes for rec once each cluster in
// its status.dns has a load balancer (the global name, one per region, one per zone, the
// dnsPrefix alias), sorted, whatever the load balancers are now: the names a client can ask
// for. It reads nothing but rec; errors are as for ServiceEndpoints, and it returns no names
// while status.domain is empty.
func ServiceNames(rec *ServiceDNSRecord) ([]string, error) {
	if rec != nil {
		rec = rec.DeepCopy()
		for i := range rec.Status.DNS {
			rec.Status.DNS[i].LoadBalancer = corev1.LoadBalancerStatus{} // nothing to resolve
		}
	}
	b, what, _, _, err := serviceNames(context.Background(), rec, nil)
	if err != nil || b == nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(b.names))
	for _, n := range names {
		if len(n) > maxName {
			return nil, fmt.Errorf("%w: %s: the name %q is longer than %d characters", ErrInvalidRecord, what, n, maxName)
		}
	}
	return names, nil
}

// serviceNames checks rec and collects its names with their targets: the part of
// ServiceEndpoints before the records are built. A nil builder means no domain yet.
func serviceNames(ctx context.Context, rec *ServiceDNSRecord, r Resolver) (*builder, string, int64, map[string]string, error) {
	if rec == nil {
		return nil, "", 0, nil, fmt.Errorf("%w: nil ServiceDNSRecord", ErrInvalidRecord)
	}
	what := "ServiceDNSRecord " + federation.Key{Namespace: rec.Namespace, Name: rec.Name}.String()
	ttl, err := recordTTL(what, rec.Spec.RecordTTL)
	if err != nil {
		return nil, "", 0, nil, err
	}
	domain := strings.TrimSuffix(rec.Status.Domain, ".")
	if domain == "" {
		return nil, "", 0, nil, nil
	}
	first, labels := rec.Name, map[string]string(nil)
	if rec.Spec.ExternalName != "" {
		first, labels = rec.Spec.ExternalName, map[string]string{LabelServiceName: rec.Name}
	}
	for _, p := range []struct {
		field, value string
		required     bool
	}{
		{"metadata.name", rec.Name, true}, {"metadata.namespace", rec.Namespace, true},
		{"spec.domainRef", rec.Spec.DomainRef, true}, {"status.domain", domain, true},
		{"spec.externalName", rec.Spec.ExternalName, false}, {"spec.dnsPrefix", rec.Spec.DNSPrefix, false},
	} {
		if p.required && p.value == "" {
			return nil, "", 0, nil, fmt.Errorf("%w: %s: %s is empty", ErrInvalidRecord, what, p.field)
		}
		if err := checkName(what, p.field, p.value, false); err != nil {
			return nil, "", 0, nil, err
		}
	}
	prefix := strings.Join([]string{first, rec.Namespace, rec.Spec.DomainRef, "svc"}, ".")
	global := prefix + "." + domain

	var b builder
	for i, c := range rec.Status.DNS {
		field := fmt.Sprintf("status.dns[%d]", i)
		targets, err := resolve(ctx, r, what, field, c.Cluster, c.LoadBalancer)
		if err != nil {
			return nil, "", 0, nil, err
		}
		b.add(global, targets, "")
		if c.Region == "" {
			continue
		}
		if err := checkClusterPart(what, field+".region", c.Cluster, c.Region); err != nil {
			return nil, "", 0, nil, err
		}
		region := prefix + "." + c.Region + "." + domain
		b.add(region, targets, global)
		for j, z := range c.Zones {
			if z == "" {
				continue
			}
			if err := checkClusterPart(what, fmt.Sprintf("%s.zones[%d]", field, j), c.Cluster, z); err != nil {
				return nil, "", 0, nil, err
			}
			b.add(prefix+"."+z+"."+c.Region+"."+domain, targets, region)
		}
	}
	if rec.Spec.DNSPrefix != "" {
		b.add(rec.Spec.DNSPrefix+"."+domain, nil, global)
	}
	return &b, what, ttl, labels, nil
}

// IngressEndpoints computes the DNS records of an IngressDNSRecord from its spec and status:
// one A record (and one AAAA record, for IPv6 addresses) per host in spec.hosts, whose
// targets are the load-balancer IPs of every cluster in status.dns, with hostnames resolved
// through r. A host without targets gets no record: an Ingress has no level to fall back to.
// TTL, sorting and errors are as for [ServiceEndpoints]; a host may start with a "*" label.
func IngressEndpoints(ctx context.Context, rec *IngressDNSRecord, r Resolver) ([]Endpoint, error) {
	if rec == nil {
		return nil, fmt.Errorf("%w: nil IngressDNSRecord", ErrInvalidRecord)
	}
	what := "IngressDNSRecord " + federation.Key{Namespace: rec.Namespace, Name: rec.Name}.String()
	ttl, err := recordTTL(what, rec.Spec.RecordTTL)
	if err != nil {
		return nil, err
	}
	var all []addr
	for i, c := range rec.Status.DNS {
		targets, err := resolve(ctx, r, what, fmt.Sprintf("status.dns[%d]", i), c.Cluster, c.LoadBalancer)
		if err != nil {
			return nil, err
		}
		all = append(all, targets...)
	}
	var b builder
	for i, host := range rec.Spec.Hosts {
		host = strings.TrimSuffix(host, ".")
		if host == "" {
			return nil, fmt.Errorf("%w: %s: spec.hosts[%d] is empty", ErrInvalidRecord, what, i)
		}
		if err := checkName(what, fmt.Sprintf("spec.hosts[%d]", i), host, true); err != nil {
			return nil, err
		}
		b.add(host, all, "")
	}
	return b.endpoints(what, ttl, nil)
}

// MaxTTL is the largest TTL, in seconds: a TTL is 32 bits whose top bit must be zero
// (RFC 2181, section 8). A larger recordTTL is refused.
const MaxTTL = math.MaxInt32

func recordTTL(what string, ttl int64) (int64, error) {
	switch {
	case ttl < 0:
		return 0, fmt.Errorf("%w: %s: spec.recordTTL %d is negative", ErrInvalidRecord, what, ttl)
	case ttl > MaxTTL:
		return 0, fmt.Errorf("%w: %s: spec.recordTTL %d is above %d (RFC 2181)", ErrInvalidRecord, what, ttl, MaxTTL)
	case ttl == 0:
		return DefaultTTL, nil
	}
	return ttl, nil
}
