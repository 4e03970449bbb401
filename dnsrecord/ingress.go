package dnsrecord

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// reconcileIngress is one pass over the IngressDNSRecord of key. It reports whether the
// record exists, the outcome for the metrics, and the error.
func (c *Controller) reconcileIngress(ctx context.Context, r federation.Reader, key federation.Key, log logr.Logger) (bool, string, error) {
	return c.reconcileRecord(ctx, r, key, log, kindIngress, IngressDNSRecordGVR, &IngressDNSRecord{}, c.ingressRecordPass)
}

// ingressRecordPass fills next's status.dns and computes its endpoints (a recordPass).
func (c *Controller) ingressRecordPass(ctx context.Context, r federation.Reader, cur, nextRec record, who claimant, log logr.Logger) (pass, error) {
	rec, next := cur.(*IngressDNSRecord), nextRec.(*IngressDNSRecord)
	next.Status.DNS = nil
	p, err := c.federated(ctx, r, federation.IngressType, federation.Key{Namespace: rec.Namespace, Name: rec.Name}, ReasonIngressNotFederated)
	if err != nil || p.reason != "" {
		return p, err
	}
	clusters, err := c.listClusters(ctx, r, log)
	if err != nil {
		return pass{}, err
	}
	domains, err := c.listDomains(ctx, r, log)
	if err != nil {
		return pass{}, err
	}
	var memberErr error
	next.Status.DNS, memberErr = IngressStatusDNS(rec, clusters, func(cluster string) (corev1.LoadBalancerStatus, error) {
		return c.ingressLoadBalancer(ctx, cluster, rec)
	})
	p = c.ingressPass(ctx, next, domains)
	p.err = joinErrors(p.err, memberErr)
	if err := c.withoutConflicts(ctx, r, who, &p); err != nil {
		return pass{}, err
	}
	return p, nil
}

// ingressLoadBalancer is the load balancer of the record's managed member Ingress in cluster.
func (c *Controller) ingressLoadBalancer(ctx context.Context, cluster string, rec *IngressDNSRecord) (corev1.LoadBalancerStatus, error) {
	ing, err := c.memberObject(ctx, cluster, ingressesGVR, rec.Namespace, rec.Name)
	if err != nil {
		return corev1.LoadBalancerStatus{}, err
	}
	return MemberLoadBalancer(ing)
}

func countIngressLoadBalancers(dns []ClusterIngressDNS) int {
	n := 0
	for _, e := range dns {
		if len(e.LoadBalancer.Ingress) > 0 {
			n++
		}
	}
	return n
}

// ingressPass computes the endpoints of next, whose status.dns is filled, publishing only the
// hosts under one of domains: a host under none is refused, and the pass says which.
func (c *Controller) ingressPass(ctx context.Context, next *IngressDNSRecord, domains []string) pass {
	pub := next.DeepCopy()
	pub.Status.DNS = nil
	if _, err := IngressEndpoints(ctx, pub, nil); err != nil { // every host's syntax, by its own index
		return computed(nil, err, 0, 0)
	}
	var refused []string
	pub.Spec.Hosts = pub.Spec.Hosts[:0]
	for i, host := range next.Spec.Hosts {
		if underDomain(host, domains) {
			pub.Spec.Hosts = append(pub.Spec.Hosts, host)
		} else {
			refused = append(refused, fmt.Sprintf("spec.hosts[%d] %q", i, host))
		}
	}
	pub.Status.DNS = next.Status.DNS
	eps, err := IngressEndpoints(ctx, pub, c.opts.Resolver)
	p := computed(eps, err, countIngressLoadBalancers(next.Status.DNS), len(next.Status.DNS))
	if p.ok && len(refused) > 0 {
		p.refuse(ReasonHostNotInDomain, fmt.Sprintf("%s: not under a Domain in %s, so not published", strings.Join(refused, ", "), c.opts.DomainNamespace))
	}
	return p
}

// underDomain reports whether host (a wildcard's too) is one of domains or a name under one.
// Names compare without regard to case and a trailing dot (RFC 4343).
func underDomain(host string, domains []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// listDomains returns the domains of the Domains in Options.DomainNamespace, lower-cased and
// without a trailing dot. A Domain that does not decode, or has no domain, is logged and left
// out.
func (c *Controller) listDomains(ctx context.Context, r federation.Reader, log logr.Logger) ([]string, error) {
	list, err := r.List(ctx, DomainGVR, c.opts.DomainNamespace, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("dnsrecord: list Domains in %s: %w", c.opts.DomainNamespace, err)
	}
	out := make([]string, 0, len(list.Items))
	for i := range list.Items {
		var d Domain
		if err := federation.FromUnstructured(&list.Items[i], &d); err != nil {
			log.Error(err, "Ignoring a Domain that does not decode", "domain", list.Items[i].GetName())
			continue
		}
		if name := strings.ToLower(strings.TrimSuffix(d.Domain, ".")); name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}
