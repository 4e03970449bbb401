package dnsrecord

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fedkit/fedkit/federation"
)

// reconcileService is one pass over the ServiceDNSRecord of key. It reports whether the
// record exists, the outcome for the metrics, and the error.
func (c *Controller) reconcileService(ctx context.Context, r federation.Reader, key federation.Key, log logr.Logger) (bool, string, error) {
	return c.reconcileRecord(ctx, r, key, log, kindService, ServiceDNSRecordGVR, &ServiceDNSRecord{}, c.serviceRecordPass)
}

// serviceRecordPass fills next's status.domain and status.dns and computes its endpoints (a
// recordPass).
func (c *Controller) serviceRecordPass(ctx context.Context, r federation.Reader, cur, nextRec record, who claimant, log logr.Logger) (pass, error) {
	rec, next := cur.(*ServiceDNSRecord), nextRec.(*ServiceDNSRecord)
	key := federation.Key{Namespace: rec.Namespace, Name: rec.Name}
	next.Status.Domain, next.Status.DNS = "", nil
	if rec.Spec.DomainRef == "" {
		return invalid(fmt.Errorf("%w: ServiceDNSRecord %s: spec.domainRef is empty", ErrInvalidRecord, key)), nil
	}
	p, err := c.serviceInputs(ctx, r, key, rec.Spec.DomainRef, next)
	if err != nil || p.reason != "" {
		return p, err
	}
	clusters, err := c.listClusters(ctx, r, log)
	if err != nil {
		return pass{}, err
	}
	var memberErr error
	next.Status.DNS, memberErr = ServiceStatusDNS(rec, clusters, func(cluster string) (corev1.LoadBalancerStatus, error) {
		return c.serviceLoadBalancer(ctx, cluster, rec)
	})
	eps, err := ServiceEndpoints(ctx, next, c.opts.Resolver)
	p = computed(eps, err, countLoadBalancers(next.Status.DNS), len(next.Status.DNS))
	p.err = joinErrors(p.err, memberErr)
	if err := c.withoutConflicts(ctx, r, who, &p); err != nil {
		return pass{}, err
	}
	return p, nil
}

// serviceInputs checks that the Service is federated and reads the Domain into
// next.Status.Domain. A missing one makes a pass with no endpoints and a reason; err is for
// failed reads.
func (c *Controller) serviceInputs(ctx context.Context, r federation.Reader, key federation.Key, domainRef string, next *ServiceDNSRecord) (pass, error) {
	if p, err := c.federated(ctx, r, federation.ServiceType, key, ReasonServiceNotFederated); p.reason != "" || err != nil {
		return p, err
	}
	d, err := r.Get(ctx, DomainGVR, c.opts.DomainNamespace, domainRef)
	switch {
	case apierrors.IsNotFound(err):
		return absent(ReasonDomainNotFound, fmt.Sprintf("Domain %s/%s (spec.domainRef) does not exist", c.opts.DomainNamespace, domainRef)), nil
	case err != nil:
		return pass{}, fmt.Errorf("dnsrecord: get Domain %s/%s: %w", c.opts.DomainNamespace, domainRef, err)
	}
	domain := &Domain{}
	if err := federation.FromUnstructured(d, domain); err != nil || strings.TrimSuffix(domain.Domain, ".") == "" {
		return absent(ReasonDomainNotFound, fmt.Sprintf("Domain %s/%s (spec.domainRef) has no domain", c.opts.DomainNamespace, domainRef)), nil
	}
	next.Status.Domain = domain.Domain
	return pass{}, nil
}

// serviceLoadBalancer is the load balancer of the record's member Service in cluster, empty
// when it does not count: no managed Service, no load balancer yet (MemberLoadBalancer), or
// (unless the record allows it) no ready endpoint behind it.
func (c *Controller) serviceLoadBalancer(ctx context.Context, cluster string, rec *ServiceDNSRecord) (corev1.LoadBalancerStatus, error) {
	svc, err := c.memberObject(ctx, cluster, servicesGVR, rec.Namespace, rec.Name)
	if err != nil {
		return corev1.LoadBalancerStatus{}, err
	}
	lb, err := MemberLoadBalancer(svc)
	if err != nil || len(lb.Ingress) == 0 {
		return corev1.LoadBalancerStatus{}, err
	}
	if !rec.Spec.AllowServiceWithoutEndpoints {
		ready, err := c.readyEndpoints(ctx, cluster, rec.Namespace, rec.Name)
		if err != nil {
			return corev1.LoadBalancerStatus{}, fmt.Errorf("list EndpointSlices: %w", err)
		}
		if !ready {
			return corev1.LoadBalancerStatus{}, nil
		}
	}
	return lb, nil
}

// countLoadBalancers counts the clusters whose load balancer counts.
func countLoadBalancers(dns []ClusterDNS) int {
	n := 0
	for _, e := range dns {
		if len(e.LoadBalancer.Ingress) > 0 {
			n++
		}
	}
	return n
}

// cleanup deletes the DNSEndpoint of a record that is gone or being deleted.
func (c *Controller) cleanup(ctx context.Context, r federation.Reader, o owner, log logr.Logger) (string, error) {
	deleted, err := c.deleteEndpoints(ctx, r, o)
	switch {
	case err != nil:
		return outcomeError, err
	case deleted:
		log.V(1).Info("Deleted the DNSEndpoint of a deleted record", "dnsEndpoint", DNSEndpointName(o.kind, o.name))
		return outcomeWritten, nil
	}
	return outcomeGone, nil
}
