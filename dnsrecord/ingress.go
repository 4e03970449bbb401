package dnsrecord

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
		var memberErr error
		next.Status.DNS, memberErr = IngressStatusDNS(rec, clusters, func(cluster string) (corev1.LoadBalancerStatus, error) {
			return c.ingressLoadBalancer(ctx, cluster, rec)
		})
		eps, err := IngressEndpoints(ctx, next, c.opts.Resolver)
		p = computed(eps, err, countIngressLoadBalancers(next.Status.DNS), len(next.Status.DNS))
		p.err = joinErrors(p.err, memberErr)
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
