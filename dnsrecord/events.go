package dnsrecord

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// EventDNSEndpointWriteFailed is the reason of the Warning recorded on a record when the host
// refuses a write of its DNSEndpoint (the Ready condition cannot say so: its write comes
// after). It is recorded once until a write succeeds, not on every retry. A successful write
// is a Normal event with the reason ReasonEndpointsWritten.
const EventDNSEndpointWriteFailed = "DNSEndpointWriteFailed"

// endpointsEvent records what one pass's DNSEndpoint write of record u did: a Normal event
// when it changed the DNSEndpoint, a Warning the first time a write fails (until one
// succeeds again), nothing when the DNSEndpoint already held the records.
func (c *Controller) endpointsEvent(ctx context.Context, u runtime.Object, o owner, p *pass, wrote bool, err error) {
	name := DNSEndpointName(o.kind, o.name)
	if err != nil {
		if c.failing(o, err.Error()) {
			c.event(ctx, u, federation.EventTypeWarning, EventDNSEndpointWriteFailed, err.Error())
		}
		return
	}
	c.failing(o, "")
	if wrote {
		c.event(ctx, u, federation.EventTypeNormal, ReasonEndpointsWritten, "DNSEndpoint "+name+": "+p.message)
	}
}

// conditionEvent records a Warning with the Ready condition's reason when it turns False, or
// changes its reason while False (a Domain missing, a hostname that does not resolve, a
// DNSEndpoint that belongs to something else).
func (c *Controller) conditionEvent(ctx context.Context, u runtime.Object, old []metav1.Condition, cond metav1.Condition) {
	if cond.Status != metav1.ConditionFalse {
		return
	}
	if prev := meta.FindStatusCondition(old, cond.Type); prev != nil && prev.Status == cond.Status && prev.Reason == cond.Reason {
		return
	}
	c.event(ctx, u, federation.EventTypeWarning, cond.Reason, cond.Message)
}

// failing records msg as o's last write failure ("" clears it) and reports whether it is a
// new one.
func (c *Controller) failing(o owner, msg string) bool {
	k := o.kind + "/" + o.namespace + "/" + o.name
	c.mu.Lock()
	defer c.mu.Unlock()
	if msg == "" {
		delete(c.failures, k)
		return false
	}
	if c.failures == nil {
		c.failures = map[string]string{}
	}
	if c.failures[k] == msg {
		return false
	}
	c.failures[k] = msg
	return true
}

// event records an event on obj through Options.Events and logs it (loop.Event).
func (c *Controller) event(ctx context.Context, obj runtime.Object, typ, reason, msg string) {
	loop.Event(ctx, c.opts.Events, obj, typ, reason, msg)
}
