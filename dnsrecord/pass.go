package dnsrecord

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// pass is what one pass over a record concluded before it writes: plain data, the same for
// both record kinds.
type pass struct {
	ok              bool   // the Ready condition's status
	reason, message string // the Ready condition's reason and message
	write           bool   // write eps to the DNSEndpoint; false keeps its last records
	eps             []Endpoint
	err             error // returned after the writes

	clusters, loadBalancers int      // counted in the message of a computed pass
	notes                   []string // the rules that kept names out (refuse)
}

// summary is the end of a computed pass's message.
func (p *pass) summary() string {
	return fmt.Sprintf("%d endpoint(s) from %d cluster(s), %d with a load balancer", len(p.eps), p.clusters, p.loadBalancers)
}

// refuse notes that a rule kept names out of a computed pass: the condition turns False with
// the first such rule's reason, and its message lists every note before the summary.
func (p *pass) refuse(reason, note string) {
	if p.ok {
		p.ok, p.reason = false, reason
	}
	p.notes = append(p.notes, note)
	p.message = strings.Join(p.notes, "; ") + "; " + p.summary()
}

// absent is a pass for a record whose federated object or Domain is missing: no endpoints.
func absent(reason, message string) pass {
	return pass{reason: reason, message: message, write: true}
}

// invalid is a pass for a record that cannot make DNS names: the DNSEndpoint keeps its last
// records and the key waits for a change.
func invalid(err error) pass {
	return pass{reason: ReasonInvalidRecord, message: err.Error() + "; the DNSEndpoint keeps its last records", err: federation.Terminal(err)}
}

// computed is the pass for the endpoints ServiceEndpoints or IngressEndpoints returned.
func computed(eps []Endpoint, err error, loadBalancers, clusters int) pass {
	switch {
	case errors.Is(err, ErrInvalidRecord):
		return invalid(err)
	case err != nil:
		return pass{reason: ReasonResolveFailed, message: err.Error() + "; the DNSEndpoint keeps its last records", err: err}
	}
	p := pass{ok: true, reason: ReasonEndpointsWritten, write: true, eps: eps, clusters: clusters, loadBalancers: loadBalancers}
	p.message = p.summary()
	return p
}

func (p pass) condition(generation int64) metav1.Condition {
	return condition(generation, p.ok, p.reason, p.message)
}

// outcome is the pass's metric outcome; a pass that did not end well is logged.
func (p pass) outcome(wrote bool, log logr.Logger) string {
	switch {
	case p.reason == ReasonInvalidRecord:
		log.V(1).Info("Invalid record", "message", p.message)
		return outcomeInvalid
	case p.err != nil:
		return outcomeError
	case wrote:
		log.V(1).Info("Record written", "reason", p.reason, "message", p.message)
		return outcomeWritten
	}
	return outcomeUnchanged
}

// applyEndpoints writes p's endpoints to o's DNSEndpoint when p says so. A DNSEndpoint that
// belongs to something else turns p into a DNSEndpointConflict.
func (c *Controller) applyEndpoints(ctx context.Context, r federation.Reader, o owner, p *pass) (bool, error) {
	if !p.write {
		return false, nil
	}
	wrote, err := c.writeEndpoints(ctx, r, o, p.eps)
	var conflict *errConflict
	if errors.As(err, &conflict) {
		p.ok, p.reason, p.message = false, ReasonDNSEndpointConflict, conflict.Error()
		return false, nil
	}
	return wrote, err
}

// federated checks that the federated object of typ (FederatedService, FederatedIngress)
// exists for key; a missing one is a pass with reason and no endpoints.
func (c *Controller) federated(ctx context.Context, r federation.Reader, typ federation.TypeConfig, key federation.Key, reason string) (pass, error) {
	_, err := r.Get(ctx, typ.FederatedGVR(), key.Namespace, key.Name)
	switch {
	case apierrors.IsNotFound(err):
		return absent(reason, fmt.Sprintf("no %s %s on the host: the %s is not federated, so nothing is published",
			typ.Federated.Kind, key, typ.Target.Kind)), nil
	case err != nil:
		return pass{}, fmt.Errorf("dnsrecord: get %s %s: %w", typ.Federated.Kind, key, err)
	}
	return pass{}, nil
}
