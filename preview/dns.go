package preview

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

// dns previews the DNS records of a FederatedService or FederatedIngress: the status the DNS
// controller would fill in (the Domain, and an entry per Ready cluster with its region,
// zones and, from the live member object, its load balancer) and what dnsrecord computes
// from it. The load balancers are taken as the live objects have them: the controller's
// check that ready endpoints stand behind a Service is not made.
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
			rec.Status.Domain, rec.Status.DNS = domain, nil
			for _, c := range r.readyClusters() {
				rec.Status.DNS = append(rec.Status.DNS, dnsrecord.ClusterDNS{Cluster: c.Name, Region: c.Region(), Zones: c.Zones(),
					LoadBalancer: r.loadBalancer(c.Name, typ, fed)})
			}
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
			rec := src.DeepCopy()
			rec.Status.DNS = nil
			for _, c := range r.readyClusters() {
				if lb := r.loadBalancer(c.Name, typ, fed); len(lb.Ingress) > 0 {
					rec.Status.DNS = append(rec.Status.DNS, dnsrecord.ClusterIngressDNS{Cluster: c.Name, LoadBalancer: lb})
				}
			}
			d := DNS{Kind: "IngressDNSRecord", Name: rec.Name}
			for _, h := range rec.Spec.Hosts {
				d.Names = append(d.Names, strings.TrimSuffix(h, "."))
			}
			if r.in.Live != nil {
				var err error
				if d.Endpoints, err = dnsrecord.IngressEndpoints(context.Background(), rec, nil); err != nil {
					ps = append(ps, Problem{Severity: Error, Object: "IngressDNSRecord " + keyOf(src).String(), Message: err.Error()})
				}
			}
			out = append(out, d)
		}
	}
	return out, ps
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

func (r *run) readyClusters() []federation.Cluster {
	var out []federation.Cluster
	for _, c := range r.clusters {
		if meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
			out = append(out, c)
		}
	}
	return out
}

// loadBalancer is status.loadBalancer of the object's live member in cluster, if any.
func (r *run) loadBalancer(cluster string, typ federation.TypeConfig, fed *federation.FederatedObject) corev1.LoadBalancerStatus {
	var lb corev1.LoadBalancerStatus
	u := find(r.in.Live[cluster], typ.Target.GroupVersion().String(), typ.Target.Kind, fed.Namespace, fed.Name)
	if u == nil {
		return lb
	}
	raw, ok, _ := unstructured.NestedMap(u.Object, "status", "loadBalancer")
	if ok {
		// An Ingress's networking/v1 load balancer has the Service's ip, hostname and
		// ports fields, as the DNS controller reads them; one that does not decode is empty.
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &lb)
	}
	return lb
}
