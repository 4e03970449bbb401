package sync

import (
	"context"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonvalue"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
	"github.com/fedkit/fedkit/sync/plan"
)

// wait ends a pass that waits for the scheduler (Decision.Wait): it writes nothing to the
// members and only the Propagated condition plan.Report gives to the object, when that
// changes.
func (s *Syncer) wait(ctx context.Context, p *pass, d plan.Decision) *end {
	rep := plan.Report(p.in, d, nil)
	res := federation.Result{RequeueAfter: s.requeue(rep)}
	if rep.Status == nil {
		return &end{res: res, outcome: fedmetrics.OutcomeUnchanged}
	}
	generation := p.in.Object.Generation
	wrote, err := s.updateStatus(ctx, p.u, func(status map[string]any) error {
		if scheduledIn(status, generation) {
			// Read again after a Conflict: the scheduler wrote meanwhile, and its write
			// brings the object back for a pass that propagates.
			return nil
		}
		return s.applyStatus(status, rep.Status)
	})
	if err != nil {
		return failure(err)
	}
	if !wrote {
		return &end{res: res, outcome: fedmetrics.OutcomeUnchanged}
	}
	s.record(p.u, rep.Events, true)
	return &end{res: res, outcome: fedmetrics.OutcomeWritten}
}

// scheduledIn reports whether status (unstructured) has a schedule and a Scheduled condition
// that observed generation.
func scheduledIn(status map[string]any, generation int64) bool {
	if status["schedule"] == nil {
		return false
	}
	list, _ := status["conditions"].([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["type"] == federation.ConditionScheduled {
			return jsonvalue.Equal(m["observedGeneration"], generation)
		}
	}
	return false
}
