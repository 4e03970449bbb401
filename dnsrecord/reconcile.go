package dnsrecord

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Reasons of the Ready condition of ServiceDNSRecords and IngressDNSRecords.
const (
	// ReasonEndpointsWritten: the DNSEndpoint holds the records of the current status.
	ReasonEndpointsWritten = "EndpointsWritten"
	// ReasonServiceNotFederated: no FederatedService of the record's namespace and name on
	// the host. The record has no endpoints.
	ReasonServiceNotFederated = "ServiceNotFederated"
	// ReasonIngressNotFederated: no FederatedIngress of the record's namespace and name on
	// the host. The record has no endpoints.
	ReasonIngressNotFederated = "IngressNotFederated"
	// ReasonDomainNotFound: the Domain named by spec.domainRef does not exist (or has no
	// domain). The record has no endpoints.
	ReasonDomainNotFound = "DomainNotFound"
	// ReasonInvalidRecord: the record (or a Cluster's region or zone, or a load balancer's
	// IP) cannot make valid DNS names; the DNSEndpoint keeps its last records.
	ReasonInvalidRecord = "InvalidRecord"
	// ReasonResolveFailed: a load balancer's hostname did not resolve; the DNSEndpoint keeps
	// its last records and the pass is retried.
	ReasonResolveFailed = "ResolveFailed"
	// ReasonHostNotInDomain: some of an IngressDNSRecord's spec.hosts are not under a
	// Domain of the controller's domain namespace; they are not published, the others are.
	ReasonHostNotInDomain = "HostNotInDomain"
	// ReasonDNSEndpointConflict: a DNSEndpoint of the record's name exists and belongs to
	// something else; it is left alone.
	ReasonDNSEndpointConflict = "DNSEndpointConflict"
)

// Outcomes counted by fedkit_reconciles_total.
const (
	outcomeWritten   = fedmetrics.OutcomeWritten
	outcomeUnchanged = fedmetrics.OutcomeUnchanged
	outcomeInvalid   = fedmetrics.OutcomeInvalid
	outcomeGone      = fedmetrics.OutcomeGone
	outcomeError     = fedmetrics.OutcomeError
)

// Reconcile makes one pass over the ServiceDNSRecord and the IngressDNSRecord of key (either,
// both or neither may exist): for each it reads the Clusters, the member objects of the Ready
// ones, computes the records and writes the record's status and its DNSEndpoint, each only
// when it changed.
//
// A record that is gone, or being deleted, has its DNSEndpoint deleted (when the DNSEndpoint
// is owned by it): the owner reference lets a real cluster's garbage collector do the same,
// but the DNS controller does not count on one running.
//
// A missing Domain or federated object, an invalid record, a DNSEndpoint that belongs to
// something else, hosts under no Domain and names an older record of another namespace
// owns are reported in the record's Ready condition. Invalid records return an
// error wrapped by [federation.Terminal]; a member that cannot be read, a hostname that does
// not resolve or a failed write return an error to be retried, after what could be written
// was. A member's read failure keeps that cluster's last known load balancer: only its
// Cluster's Ready condition makes its names fall back. The Result asks for a pass after
// Options.ResyncPeriod while a record exists; it is ignored when the error is not nil.
func (c *Controller) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return c.reconcileFrom(ctx, c.host, key)
}

// reconcileFrom is Reconcile reading the host through r: the host itself, or Run's caches.
// Writes always go to the host, guarded by the resourceVersion read.
func (c *Controller) reconcileFrom(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, error) {
	// One pass per record kind, each with its own log values and metrics; a kind of which
	// neither a record nor a DNSEndpoint exists records no pass.
	pass := func(kind string, run func(context.Context, federation.Reader, federation.Key, logr.Logger) (bool, string, error)) (exists bool, err error) {
		p := loop.Pass{Loop: fedmetrics.LoopDNS, Type: kind, Clock: c.opts.Clock, Logger: c.opts.Logger, Observe: c.metrics.reconciles[kind].Observe}
		_, err = p.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) {
			var outcome string
			exists, outcome, err = run(ctx, r, key, logr.FromContextOrDiscard(ctx))
			if !exists && outcome == fedmetrics.OutcomeGone {
				outcome = ""
			}
			return federation.Result{}, outcome, err
		})
		return exists, err
	}
	svcExists, svcErr := pass(kindService, c.reconcileService)
	ingExists, ingErr := pass(kindIngress, c.reconcileIngress)
	if err := joinErrors(svcErr, ingErr); err != nil {
		return federation.Result{}, err
	}
	var res federation.Result
	if svcExists || ingExists {
		res.RequeueAfter = c.opts.ResyncPeriod
	}
	return res, nil
}

// joinErrors joins the errors of the two kinds so that the result is terminal only when every
// error is: a retryable failure of one kind must not be dropped with the other's terminal one.
func joinErrors(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case federation.IsTerminal(a) != federation.IsTerminal(b):
		// errors.Join would report the pair as terminal (errors.Is finds ErrTerminal in it).
		if federation.IsTerminal(a) {
			a, b = b, a
		}
		return fmt.Errorf("%w; and: %s", a, b.Error())
	}
	return errors.Join(a, b)
}

// condition returns the Ready condition.
func condition(generation int64, ok bool, reason, message string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{
		Type:               federation.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            fedcond.Truncate(message, fedcond.MaxMessage),
		ObservedGeneration: generation,
	}
}
