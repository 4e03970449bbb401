package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Reasons of the Scheduled condition.
const (
	// ReasonScheduled: every replica has a cluster.
	ReasonScheduled = "Scheduled"
	// ReasonUnschedulable: some replicas fit nowhere (every candidate is at its maximum or
	// capacity), or no cluster was selected; the schedule holds what could be placed.
	ReasonUnschedulable = "Unschedulable"
	// ReasonUnsatisfiable: a spread constraint's minGroups cannot be met; the schedule is
	// the best effort.
	ReasonUnsatisfiable = "Unsatisfiable"
	// ReasonInvalidPlacement: spec.placement is invalid; the last good schedule stays.
	ReasonInvalidPlacement = "InvalidPlacement"
	// ReasonInvalidPreference: the ReplicaSchedulingPreference is invalid; the last good
	// schedule stays.
	ReasonInvalidPreference = "InvalidPreference"
	// ReasonInvalidObject: the federated object cannot be decoded, or its template is
	// invalid (replicas negative or not an integer, a pod template that does not decode).
	ReasonInvalidObject = "InvalidObject"
)

// Reconcile schedules one federated object: it reads the object, its
// ReplicaSchedulingPreference (same namespace and name, when its targetKind is this type) and
// the Clusters; selects clusters with package placement; divides the replicas with [Divide];
// and writes status.schedule and the Scheduled condition, only when they change.
//
// Without a ReplicaSchedulingPreference every selected cluster gets the template's replica
// count (the Duplicated strategy; a cluster without room for them is capped and reported:
// Scheduled=False, Unschedulable); for a type that is not divisible (TypeConfig.ReplicasPath
// empty) the schedule only lists clusters and its replica counts are 0. With one, the
// candidates are the clusters with a preference of their own or a "*" entry: among every
// cluster (KubeFed's default), or among those the object's placement selects when
// spec.intersectWithClusterSelector is true; the others are reported with the placement rule
// Preference. Either way the placement's other rules (exclusions, affinity, taints and
// readiness, spread, maxClusters) apply, and the spread constraint that sets maxSkew spreads
// the replicas over the groups placement chose. The Scheduled message says when the
// preference set aside a placement that would have left clusters out, and warns about cluster
// names no Cluster has (an error with Options.RejectUnknownClusters); see the package
// documentation.
//
// Current replicas per cluster come from status.clusters (the status loop) when fresh, else
// from the previous schedule, so with rebalance off running replicas stay put. A cluster's
// capacity for the object is what fits in its status.available given the template's pod
// requests, plus those current replicas (see [ClusterState].Capacity).
//
// With rebalance off, once per rebalancePeriod (tracked in status.schedule.lastRebalanceTime)
// the clusters below their fair share, such as a recovered or new cluster, get replicas back
// ([Request].Refill); the Result asks for a requeue when the period ends. With rebalance on,
// every pass divides by weight and the Result asks for a requeue after rebalancePeriod.
//
// An invalid placement, preference or object (a template whose replicas are negative or not
// an integer, a pod template that does not decode) sets Scheduled=False with the validation
// message and field path, keeps the last good schedule and returns an error wrapped by
// [federation.Terminal]. A Cluster's own numbers (headroom, cost) are never reported as the
// preference's: they saturate or count as unknown. The Result is ignored when the error is
// not nil.
//
// Reconcile reads the object, its preference and the Clusters from the host's API server;
// within [Scheduler.Run] the same pass reads them from Run's informer caches instead. Its one
// write, the status, always goes to the API server with the resourceVersion it read, so a
// decision made on a stale object fails with a Conflict; the pass then reads the object from
// the API server and decides again (at most three times) before it returns the Conflict for a
// retry with backoff.
func (s *Scheduler) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return s.reconcileFrom(ctx, s.host, key)
}

// reconcileFrom is Reconcile reading the host through r: the host itself, or Run's caches.
func (s *Scheduler) reconcileFrom(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, error) {
	r = federation.PendingReader(r, s.opts.StatusWriter, s.typ.FederatedGVR())
	p := loop.Pass{Loop: fedmetrics.LoopScheduler, Type: s.typ.Federated.Kind, Clock: s.opts.Clock, Logger: s.opts.Logger, Observe: s.metrics.observe}
	return p.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) { return s.reconcile(ctx, r, key) })
}

func (s *Scheduler) reconcile(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, string, error) {
	log := logr.FromContextOrDiscard(ctx)
	in, err := s.read(ctx, r, key, log)
	switch {
	case apierrors.IsNotFound(err):
		return federation.Result{}, fedmetrics.OutcomeGone, nil
	case in.invalid != "":
		return s.invalid(ctx, in.u, in.invalid, err)
	case err != nil:
		return federation.Result{}, fedmetrics.OutcomeError, err
	case in.u.GetDeletionTimestamp() != nil:
		return federation.Result{}, fedmetrics.OutcomeGone, nil // being deleted: sync cleans up, nothing to place
	}

	var d Decision
	changed := false
	for attempt := 0; ; attempt++ {
		d, err = Decide(s.input(in))
		if d.Schedule == nil {
			return s.invalid(ctx, in.u, d.Condition.Reason, err)
		}
		changed, err = s.write(ctx, in.u, d.Schedule, d.Condition)
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt >= conflictRetries {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
		// Another loop wrote the object since it was read (sync's finalizer, the collector's
		// status): decide again on the object as it is now, in this pass, rather than throw
		// the pass away and wait for the queue's backoff.
		fresh, ferr := s.reread(ctx, key)
		switch {
		case apierrors.IsNotFound(ferr):
			return federation.Result{}, fedmetrics.OutcomeGone, nil
		case fresh.invalid != "":
			return s.invalid(ctx, fresh.u, fresh.invalid, ferr)
		case ferr != nil:
			return federation.Result{}, fedmetrics.OutcomeError, errors.Join(err, ferr)
		case fresh.u.GetDeletionTimestamp() != nil:
			return federation.Result{}, fedmetrics.OutcomeGone, nil
		}
		in.u, in.fed = fresh.u, fresh.fed
	}
	outcome := fedmetrics.OutcomeUnchanged
	if changed {
		outcome = fedmetrics.OutcomeWritten
		log.V(1).Info("Scheduled", "message", d.Message)
		s.report(ctx, in.u, d.Schedule, d.Condition)
	}
	return federation.Result{RequeueAfter: d.RequeueAfter}, outcome, nil
}

// conflictRetries bounds how often a pass decides again on a fresh read after its status
// write met a Conflict.
const conflictRetries = 3

// reread gets the object itself from the host (not a cache, which may not have the version
// that won the Conflict yet) and decodes it; invalid is set when it does not decode.
func (s *Scheduler) reread(ctx context.Context, key federation.Key) (inputs, error) {
	var in inputs
	var err error
	in.u, err = federation.PendingReader(s.host, s.opts.StatusWriter, s.typ.FederatedGVR()).Get(ctx, s.typ.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return in, fmt.Errorf("scheduler: get %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	if in.fed, err = federation.FederatedObjectFromUnstructured(in.u); err != nil {
		in.invalid = ReasonInvalidObject
		return in, err
	}
	return in, nil
}

// input is what Decide needs from one pass's reads, at the Scheduler's clock's now.
func (s *Scheduler) input(in inputs) Input {
	return Input{
		Type: s.typ, Object: in.fed, Preference: in.rsp, Clusters: in.clusters,
		Previous: in.fed.Status.Schedule, Now: s.opts.Clock.Now(),
		RejectUnknownClusters: s.opts.RejectUnknownClusters, Disruption: s.opts.Disruption,
	}
}

// inputs are the reads one scheduling decision needs.
type inputs struct {
	u        *unstructured.Unstructured
	fed      *federation.FederatedObject
	rsp      *federation.ReplicaSchedulingPreference
	clusters []federation.Cluster
	// invalid is the Scheduled condition's reason when the error is about bad input (the
	// object, its placement or its preference) rather than a failed read.
	invalid string
}

// read gets the object, its preference and the Clusters through r. A missing object is an
// error satisfying apierrors.IsNotFound.
func (s *Scheduler) read(ctx context.Context, r federation.Reader, key federation.Key, log logr.Logger) (inputs, error) {
	var in inputs
	var err error
	in.u, err = r.Get(ctx, s.typ.FederatedGVR(), key.Namespace, key.Name)
	if err != nil {
		return in, fmt.Errorf("scheduler: get %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	if in.fed, err = federation.FederatedObjectFromUnstructured(in.u); err != nil {
		in.invalid = ReasonInvalidObject
		return in, err
	}
	if in.rsp, err = s.preference(ctx, r, key); err != nil {
		var inv *federation.InvalidError
		if errors.As(err, &inv) {
			in.invalid = ReasonInvalidPreference
		}
		return in, err
	}
	in.clusters, err = s.clusters(ctx, r, log)
	return in, err
}

// invalid records a terminal problem in the Scheduled condition, keeps the schedule, and
// returns the error marked terminal.
func (s *Scheduler) invalid(ctx context.Context, u *unstructured.Unstructured, reason string, cause error) (federation.Result, string, error) {
	cond := invalidCondition(reason, cause, u.GetGeneration())
	changed, err := s.write(ctx, u, nil, cond)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, errors.Join(cause, err)
	}
	if changed {
		s.report(ctx, u, nil, cond)
	}
	return federation.Result{}, fedmetrics.OutcomeInvalid, federation.Terminal(cause)
}

// preference returns the object's ReplicaSchedulingPreference as stored, or nil when there is
// none. Decide defaults and validates it, and ignores one for another kind.
func (s *Scheduler) preference(ctx context.Context, r federation.Reader, key federation.Key) (*federation.ReplicaSchedulingPreference, error) {
	u, err := r.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scheduler: get ReplicaSchedulingPreference %s: %w", key, err)
	}
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	if err != nil {
		return nil, federation.NewInvalidError("ReplicaSchedulingPreference", key, fieldDecodeError(err))
	}
	return rsp, nil
}

// clusters lists the Clusters on the host. A Cluster that does not decode cannot be placed on;
// it is logged and left out (placement never sees it). Decide leaves out the Clusters being
// deleted.
func (s *Scheduler) clusters(ctx context.Context, r federation.Reader, log logr.Logger) ([]federation.Cluster, error) {
	out, err := s.clusterList.List(ctx, r, log)
	if err != nil {
		return nil, fmt.Errorf("scheduler: list Clusters: %w", err)
	}
	return out, nil
}
