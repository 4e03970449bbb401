package dnsrecord

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// record is what one pass needs of a ServiceDNSRecord or an IngressDNSRecord.
type record interface {
	metav1.Object
	runtime.Object
	// status is the record's status, by pointer (what the pass compares and writes).
	status() any
	// conditions is the record's status.conditions.
	conditions() *[]metav1.Condition
	// copyRecord is a deep copy.
	copyRecord() record
}

func (r *ServiceDNSRecord) status() any                     { return &r.Status }
func (r *ServiceDNSRecord) conditions() *[]metav1.Condition { return &r.Status.Conditions }
func (r *ServiceDNSRecord) copyRecord() record              { return r.DeepCopy() }

func (r *IngressDNSRecord) status() any                     { return &r.Status }
func (r *IngressDNSRecord) conditions() *[]metav1.Condition { return &r.Status.Conditions }
func (r *IngressDNSRecord) copyRecord() record              { return r.DeepCopy() }

// recordPass computes the endpoints of rec: it fills next's status (next is rec's copy) and
// returns the pass, checked for conflicts with who's claims; err is for failed reads.
type recordPass func(ctx context.Context, r federation.Reader, rec, next record, who claimant, log logr.Logger) (pass, error)

// reconcileRecord is one pass over the record of kind (kindService, kindIngress) at key, read
// into rec: the steps both kinds share around compute. It reports whether the record exists,
// the outcome for the metrics, and the error.
func (c *Controller) reconcileRecord(ctx context.Context, r federation.Reader, key federation.Key, log logr.Logger, kind string, gvr schema.GroupVersionResource, rec record, compute recordPass) (bool, string, error) {
	o := owner{kind: kind, namespace: key.Namespace, name: key.Name}
	u, err := r.Get(ctx, gvr, key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		outcome, err := c.cleanup(ctx, r, o, log)
		return false, outcome, err
	}
	if err != nil {
		return false, outcomeError, fmt.Errorf("dnsrecord: get %s %s: %w", kind, key, err)
	}
	if err := federation.FromUnstructured(u, rec); err != nil {
		return true, outcomeInvalid, federation.Terminal(fmt.Errorf("dnsrecord: %w", err))
	}
	o.uid = rec.GetUID()
	if rec.GetDeletionTimestamp() != nil {
		outcome, err := c.cleanup(ctx, r, o, log)
		return true, outcome, err
	}

	next := rec.copyRecord()
	who := claimant{kind: kind, namespace: rec.GetNamespace(), name: rec.GetName(), uid: rec.GetUID(), created: rec.GetCreationTimestamp().Time}
	p, err := compute(ctx, r, rec, next, who, log)
	if err != nil {
		return true, outcomeError, err
	}
	wrote, err := c.applyEndpoints(ctx, r, o, &p)
	c.endpointsEvent(ctx, u, o, &p, wrote, err)
	if err != nil {
		return true, outcomeError, err
	}
	cond := p.condition(rec.GetGeneration())
	*next.conditions(), _ = fedcond.Set(*rec.conditions(), cond, c.opts.Clock.Now())
	if !apiequality.Semantic.DeepEqual(rec.status(), next.status()) {
		if err := c.updateStatus(ctx, gvr, u, next.status()); err != nil {
			return true, outcomeError, err
		}
		wrote = true
		c.conditionEvent(ctx, u, *rec.conditions(), cond)
	}
	return true, p.outcome(wrote, log), p.err
}
