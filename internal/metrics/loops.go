package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fedkit/fedkit/federation"
)

// Values of LabelOutcome: what one pass of a loop over one key did. Every loop uses the same
// words, so one query answers "how often does anything fail" across loops.
const (
	// OutcomeWritten: the pass wrote something (a status, a member object, a DNSEndpoint).
	OutcomeWritten = "written"
	// OutcomeUnchanged: everything was already as it should be; nothing was written.
	OutcomeUnchanged = "unchanged"
	// OutcomeGone: the object does not exist any more, or is being deleted by someone else;
	// the pass only forgot it.
	OutcomeGone = "gone"
	// OutcomeInvalid: bad input (an invalid object, placement or preference), reported in a
	// condition; the key waits for a change (the error is terminal).
	OutcomeInvalid = "invalid"
	// OutcomeConflict: a write met a newer resourceVersion; the key is retried. Optimistic
	// concurrency at work, counted apart from errors so that alerts on errors stay quiet.
	OutcomeConflict = "conflict"
	// OutcomeError: any other failure; the key is retried with backoff.
	OutcomeError = "error"
)

// Values of LabelResult: how one request to a member cluster ended.
const (
	ResultOK            = "ok"
	ResultNotFound      = "not_found"
	ResultAlreadyExists = "already_exists"
	ResultConflict      = "conflict"
	// ResultUnreachable: no answer (refused, reset, timed out, partitioned): the error wraps
	// federation.ErrUnreachable or a context deadline.
	ResultUnreachable = "unreachable"
	ResultError       = "error"
)

// durationBuckets span a pass that reads from caches (well under a millisecond) to one that
// waits for slow members (tens of seconds): 0.5ms, 2ms, 8ms, ... 32.8s.
var durationBuckets = prometheus.ExponentialBuckets(0.0005, 4, 9)

// Reconciles counts one loop's passes and times them, in the families every loop shares:
// fedkit_reconciles_total and fedkit_reconcile_duration_seconds, labelled loop, type and
// outcome.
type Reconciles struct {
	loop, typ string
	total     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
}

// NewReconciles returns the reconcile metrics of loop for objects of typ, registered into reg
// (nil: counted, not exported).
func NewReconciles(reg prometheus.Registerer, loop, typ string) (*Reconciles, error) {
	labels := []string{LabelLoop, LabelType, LabelOutcome}
	r := &Reconciles{
		loop: loop, typ: typ,
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fedkit_reconciles_total",
			Help: "Passes of a loop over one key, by loop, type of object and outcome (written, unchanged, gone, invalid, conflict, error).",
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fedkit_reconcile_duration_seconds",
			Help:    "Time of one pass of a loop over one key, reads and writes included, by loop, type of object and outcome.",
			Buckets: durationBuckets,
		}, labels),
	}
	var err error
	if r.total, err = Register(reg, r.total); err != nil {
		return nil, err
	}
	if r.duration, err = Register(reg, r.duration); err != nil {
		return nil, err
	}
	return r, nil
}

// Observe records one pass that took from start to end. An OutcomeError pass whose error is
// a Conflict is recorded as OutcomeConflict.
func (r *Reconciles) Observe(outcome string, err error, start, end time.Time) {
	if outcome == OutcomeError && apierrors.IsConflict(err) {
		outcome = OutcomeConflict
	}
	r.total.WithLabelValues(r.loop, r.typ, outcome).Inc()
	r.duration.WithLabelValues(r.loop, r.typ, outcome).Observe(end.Sub(start).Seconds())
}

// Members counts one loop's requests to member clusters in the family every loop shares,
// fedkit_member_requests_total, labelled loop, cluster, verb and result. Only requests that
// reach (or try to reach) a member's API server count: reads served by a member cache cost
// the member nothing and are not counted.
type Members struct {
	loop  string
	total *prometheus.CounterVec
}

// NewMembers returns the member request metrics of loop, registered into reg (nil: counted,
// not exported).
func NewMembers(reg prometheus.Registerer, loop string) (*Members, error) {
	m := &Members{loop: loop, total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fedkit_member_requests_total",
		Help: "Requests of a loop to a member cluster's API server, by loop, cluster, verb (get, list, create, update, patch, delete, watch, probe) and result (ok, not_found, already_exists, conflict, unreachable, error).",
	}, []string{LabelLoop, LabelCluster, LabelVerb, LabelResult})}
	var err error
	if m.total, err = Register(reg, m.total); err != nil {
		return nil, err
	}
	return m, nil
}

// Observe records one request of verb to cluster that ended with err.
func (m *Members) Observe(cluster, verb string, err error) {
	m.total.WithLabelValues(m.loop, cluster, verb, Result(err)).Inc()
}

// ObserveResult records one request of verb to cluster whose result the caller classified
// (a health probe knows "unreachable" from "answered not ready" better than its error does).
func (m *Members) ObserveResult(cluster, verb, result string) {
	m.total.WithLabelValues(m.loop, cluster, verb, result).Inc()
}

// ForgetCluster deletes every series of cluster, of every loop sharing the family: the
// cluster left the federation.
func (m *Members) ForgetCluster(cluster string) {
	m.total.DeletePartialMatch(prometheus.Labels{LabelCluster: cluster})
}

// Result is the LabelResult value of a request that ended with err.
func Result(err error) string {
	switch {
	case err == nil:
		return ResultOK
	case apierrors.IsNotFound(err):
		return ResultNotFound
	case apierrors.IsAlreadyExists(err):
		return ResultAlreadyExists
	case apierrors.IsConflict(err):
		return ResultConflict
	case errors.Is(err, federation.ErrUnreachable), errors.Is(err, context.DeadlineExceeded):
		return ResultUnreachable
	}
	return ResultError
}
