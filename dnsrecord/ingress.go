package dnsrecord

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// reconcileIngress is one pass over the IngressDNSRecord of key. It reports whether the
// record exists, the outcome for the metrics, and the error.
func (c *Controller) reconcileIngress(ctx context.Context, r federation.Reader, key federation.Key, log logr.Logger) (bool, string, error) {
	o := owner{kind: kindIngress, namespace: key.Namespace, name: key.Name}
	u, err := r.Get(ctx, IngressDNSRecordGVR, key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		outcome, err := c.cleanup(ctx, r, o, log)
		return false, outcome, err
	}
	if err != nil {
		return false, outcomeError, fmt.Errorf("dnsrecord: get IngressDNSRecord %s: %w", key, err)
	}
	rec := &IngressDNSRecord{}
	if err := federation.FromUnstructured(u, rec); err != nil {
		return true, outcomeInvalid, federation.Terminal(fmt.Errorf("dnsrecord: %w", err))
	}
	o.uid = rec.UID
	if rec.DeletionTimestamp != nil {
		outcome, err := c.cleanup(ctx, r, o, log)
		return true, outcome, err
	}

	next := rec.DeepCopy()
	next.Status.DNS = nil
	p, err := c.federated(ctx, r, federation.IngressType, key, ReasonIngressNotFederated)
	if err != nil {
		return true, outcomeError, err
	}
	if p.reason == "" {
		clusters, err := c.listClusters(ctx, r, log)
		if err != nil {
			return true, outcomeError, err
		}
		domains, err := c.listDomains(ctx, r, log)
		if err != nil {
			return true, outcomeError, err
		}
		var memberErr error
		next.Status.DNS, memberErr = IngressStatusDNS(rec, clusters, func(cluster string) (corev1.LoadBalancerStatus, error) {
			return c.ingressLoadBalancer(ctx, cluster, rec)
		})
		p = c.ingressPass(ctx, next, domains)
		p.err = joinErrors(p.err, memberErr)
		if err := c.withoutConflicts(ctx, r, claimant{kind: kindIngress, namespace: rec.Namespace, name: rec.Name, uid: rec.UID, created: rec.CreationTimestamp.Time}, &p); err != nil {
			return true, outcomeError, err
		}
	}
	wrote, err := c.applyEndpoints(ctx, r, o, &p)
	c.endpointsEvent(ctx, u, o, &p, wrote, err)
	if err != nil {
		return true, outcomeError, err
	}
	cond := p.condition(rec.Generation)
	next.Status.Conditions, _ = fedcond.Set(rec.Status.Conditions, cond, c.opts.Clock.Now())
	if !apiequality.Semantic.DeepEqual(rec.Status, next.Status) {
		if err := c.updateStatus(ctx, IngressDNSRecordGVR, u, &next.Status); err != nil {
			return true, outcomeError, err
		}
		wrote = true
		c.conditionEvent(ctx, u, rec.Status.Conditions, cond)
	}
	return true, p.outcome(wrote, log), p.err
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
