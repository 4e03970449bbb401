package scheduler

import (
	"context"
	"errors"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// Explanation is what the Scheduler would decide for one object now, with the reasons: the
// placement decision (selected clusters and why the others were left out) and the plan (each
// cluster's count and how it came about).
type Explanation struct {
	// Placement is the cluster selection, including a Diagnosis per left-out cluster.
	Placement placement.Decision
	// Plan is the division of replicas among the selected clusters.
	Plan Plan
	// Schedule is what Reconcile writes to status.schedule.
	Schedule federation.Schedule
	// Warnings are the decision's warnings (see [Decision].Warnings).
	Warnings []Warning
	// Message is the Scheduled condition's message.
	Message string
}

// Explain computes the object's schedule exactly as Reconcile does, from the same reads, but
// writes nothing: "why does cluster X get 3 replicas", "why not cluster Y". It reads the
// clock once, as Reconcile does, to know whether the rebalance period allows a refill. It
// returns an error satisfying apierrors.IsNotFound when the object does not exist, and the
// validation error (wrapping federation.ErrInvalidObject, placement.ErrInvalidPlacement or
// ErrInvalidRequest) when the object, its placement or its preference is invalid, or names a
// cluster that does not exist while Options.RejectUnknownClusters is set. When no
// selection meets the spread constraints' minGroups, it returns the best-effort Explanation
// together with an error wrapping placement.ErrUnsatisfiable.
func (s *Scheduler) Explain(ctx context.Context, key federation.Key) (Explanation, error) {
	return s.explain(ctx, key, false)
}

// ExplainFresh answers "why would it place this now?": the schedule the object would get if
// nothing had been scheduled for it before. The previous status.schedule is ignored and
// running replicas do not stay where they are (they still count towards their cluster's
// capacity: they hold room there), so the answer is the division by the preference alone,
// where Explain's may keep replicas in place until the next refill (rebalance off). It is
// [Decide] with Input.Fresh; errors are as for [Scheduler.Explain].
func (s *Scheduler) ExplainFresh(ctx context.Context, key federation.Key) (Explanation, error) {
	return s.explain(ctx, key, true)
}

func (s *Scheduler) explain(ctx context.Context, key federation.Key, fresh bool) (Explanation, error) {
	in, err := s.read(ctx, s.host, key, s.opts.Logger)
	if err != nil {
		return Explanation{}, err
	}
	din := s.input(in)
	din.Fresh = fresh
	d, err := Decide(din)
	if err != nil && !errors.Is(err, placement.ErrUnsatisfiable) {
		return Explanation{}, err
	}
	return Explanation{Placement: d.Placement, Plan: d.Plan, Schedule: *d.Schedule, Warnings: d.Warnings, Message: d.Message}, err
}
