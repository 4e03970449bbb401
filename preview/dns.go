package preview

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

// dns previews the DNS records of a FederatedService or FederatedIngress: the status the DNS
// loop would write (the Domain, and status.dns by dnsrecord.ServiceStatusDNS or
// IngressStatusDNS, the loop's own rules, from the record's current status and the live
// member objects through dnsrecord.MemberLoadBalancer) and what dnsrecord computes from
// it. A cluster missing from a non-nil Input.Live was not read, which the rules treat as a
// failed read: the cluster keeps the load balancer the record's status has for it. The
// loop's check that ready endpoints stand behind a Service is not made: a preview has no
// EndpointSlices.
func (r *run) dns(typ federation.TypeConfig, fed *federation.FederatedObject) ([]DNS, []Problem) {
	var out []DNS
	var ps []Problem
	switch typ.Federated.Kind {
	case federation.ServiceType.Federated.Kind:
		for i := range r.in.ServiceDNSRecords {
			src := &r.in.ServiceDNSRecords[i]
			if src.Namespace != fed.Namespace || src.Name != fed.Name {
				continue
			}
			what := "ServiceDNSRecord " + keyOf(src).String()
			domain, ok := r.domain(src.Spec.DomainRef)
			if !ok {
				ps = append(ps, Problem{Severity: Error, Object: what, Field: "spec.domainRef",
					Message: fmt.Sprintf("no Domain %q in the input (DomainNotFound): nothing is published", src.Spec.DomainRef)})
				continue
			}
			rec := src.DeepCopy()
			rec.Status.Domain = domain
			// Read failures are the clusters not read, or reported by the reader: the rules
			// keep their previous load balancers.
			rec.Status.DNS, _ = dnsrecord.ServiceStatusDNS(src, r.clusters, r.loadBalancers(what, typ, fed, &ps))
			d := DNS{Kind: "ServiceDNSRecord", Name: rec.Name}
			names, err := dnsrecord.ServiceNames(rec)
			if err == nil && r.in.Live != nil {
				d.Endpoints, err = dnsrecord.ServiceEndpoints(context.Background(), rec, nil)
			}
			if err != nil {
				ps = append(ps, Problem{Severity: Error, Object: what, Message: err.Error()})
			}
			d.Names = names
			out = append(out, d)
		}
	case federation.IngressType.Federated.Kind:
		for i := range r.in.IngressDNSRecords {
			src := &r.in.IngressDNSRecords[i]
			if src.Namespace != fed.Namespace || src.Name != fed.Name {
				continue
			}
			what := "IngressDNSRecord " + keyOf(src).String()
			rec := src.DeepCopy()
			rec.Status.DNS, _ = dnsrecord.IngressStatusDNS(src, r.clusters, r.loadBalancers(what, typ, fed, &ps))
			d := DNS{Kind: "IngressDNSRecord", Name: rec.Name}
			for _, h := range rec.Spec.Hosts {
				d.Names = append(d.Names, strings.TrimSuffix(h, "."))
			}
			if r.in.Live != nil {
				var err error
				if d.Endpoints, err = dnsrecord.IngressEndpoints(context.Background(), rec, nil); err != nil {
					ps = append(ps, Problem{Severity: Error, Object: what, Message: err.Error()})
				}
			}
			out = append(out, d)
		}
	}
	return out, ps
}

// errNotRead is the read of a cluster missing from Input.Live.
var errNotRead = errors.New("not read")

// loadBalancers returns the reader of the record's load balancers that the dnsrecord rules
// call: each cluster's from its live member object, through dnsrecord.MemberLoadBalancer.
// A member whose status.loadBalancer does not decode is a warning added to ps (the loop
// keeps the cluster's previous load balancer and retries).
func (r *run) loadBalancers(what string, typ federation.TypeConfig, fed *federation.FederatedObject, ps *[]Problem) func(string) (corev1.LoadBalancerStatus, error) {
	return func(cluster string) (corev1.LoadBalancerStatus, error) {
		objs, read := r.in.Live[cluster]
		if !read {
			return corev1.LoadBalancerStatus{}, errNotRead
		}
		u := find(objs, typ.Target.GroupVersion().String(), typ.Target.Kind, fed.Namespace, fed.Name)
		lb, err := dnsrecord.MemberLoadBalancer(u)
		if err != nil {
			*ps = append(*ps, Problem{Severity: Warning, Object: what, Field: "status.dns",
				Message: fmt.Sprintf("cluster %q: %v: the DNS loop keeps the cluster's previous load balancer and retries", cluster, err)})
		}
		return lb, err
	}
}

// domain returns the DNS name of the Domain called name.
func (r *run) domain(name string) (string, bool) {
	for _, d := range r.in.Domains {
		if d.Name == name {
			return d.Domain, true
		}
	}
	return "", false
}
