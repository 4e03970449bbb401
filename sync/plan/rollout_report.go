package plan

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// rolloutPass is a staged rollout's part of one pass's Report: the decision, and where the
// rollout stood before (status.rollout as read). A nil rolloutPass is an object without
// spec.rollout: it says nothing and holds nothing.
type rolloutPass struct {
	decision RolloutDecision
	prev     *federation.RolloutStatus
	revision int64
	previous *PreviousRevision
}

// rolloutOf is the pass's view of d's rollout decision; nil without spec.rollout.
func rolloutOf(in Input, d Decision) *rolloutPass {
	if d.Rollout == nil {
		return nil
	}
	return &rolloutPass{decision: *d.Rollout, prev: in.Object.Status.Rollout, revision: in.Revision, previous: d.Previous}
}

// status is the new status.rollout; nil without a rollout.
func (p *rolloutPass) status() *federation.RolloutStatus {
	if p == nil {
		return nil
	}
	return p.decision.Status
}

// complete reports whether every placed cluster is to run the revision (true without a
// rollout): only then is it status.syncedRevision.
func (p *rolloutPass) complete() bool {
	return p == nil || p.decision.Stable == nil
}

// requeue is when the rollout wants the pass to come back: when a stage's time runs out; 0
// when only new data can move it.
func (p *rolloutPass) requeue() time.Duration {
	if p == nil {
		return 0
	}
	return p.decision.RequeueAfter
}

// note adds the rollout to the Propagated condition's message while it holds clusters back.
func (p *rolloutPass) note() string {
	if p.complete() || len(p.previous.Clusters) == 0 {
		return ""
	}
	return fmt.Sprintf("; staged rollout (status.rollout): %d of them keep revision %d for now (%s)",
		len(p.previous.Clusters), p.previous.Revision, summarize(p.previous.Clusters))
}

// newRollout reports whether this pass started the rollout of a new revision (not one that
// goes on under a new number: a change of placement or replica counts).
func (p *rolloutPass) newRollout() bool {
	return p.prev == nil || (p.prev.Revision != p.revision && !p.decision.Continues)
}

// rolledBackCleared is the RolledBack condition turned False when a newer revision starts
// rolling out after a rollback; ok is false when it stays as it is.
func (p *rolloutPass) rolledBackCleared(in Input) (metav1.Condition, bool) {
	if p == nil || !p.newRollout() || p.decision.Stable == nil ||
		!meta.IsStatusConditionTrue(in.Object.Status.Conditions, federation.ConditionRolledBack) {
		return metav1.Condition{}, false
	}
	return condition(federation.ConditionRolledBack, metav1.ConditionFalse, ReasonRolloutStarted,
		fmt.Sprintf("revision %d rolls out", p.revision), in.Object.Generation), true
}

// events are what the pass changed in the rollout: a stage started, the rollout completed or
// failed. They are recorded once the status says so (Event.OnChange).
func (p *rolloutPass) events() []Event {
	if p == nil {
		return nil
	}
	st, d := p.decision.Status, p.decision
	prevStage, prevPhase := int32(0), ""
	if !p.newRollout() {
		prevStage, prevPhase = p.prev.Stage, p.prev.Phase
	}
	event := func(typ, reason, format string, args ...any) Event {
		return Event{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...), OnChange: true}
	}
	switch {
	case d.Failed && !d.Rollback:
		return []Event{event(federation.EventTypeWarning, EventRolloutFailed, "revision %d: %s", p.revision, st.Message)}
	case st.Phase == federation.RolloutComplete && prevPhase != "" && prevPhase != federation.RolloutComplete:
		return []Event{event(federation.EventTypeNormal, EventRolloutComplete, "revision %d runs in every placed cluster", p.revision)}
	case st.Phase != federation.RolloutComplete && st.Stage > prevStage:
		var out []Event
		for k := prevStage + 1; k <= st.Stage && int(k) <= len(d.Stages); k++ {
			if stage := d.Stages[k-1]; len(stage.Clusters) > 0 {
				out = append(out, event(federation.EventTypeNormal, EventRolloutStageStarted, "revision %d: stage %d of %d (%s) started in %s",
					p.revision, k, st.Stages, stage.Name, summarize(stage.Clusters)))
			}
		}
		return out
	}
	return nil
}

// rollbackReport is the Report of a pass that restored the stable revision after a failed
// rollout (Decision.Rollback): status.rollout and the RolledBack condition say what happened,
// with a Warning event. The driver wrote the spec back first: the condition is for the
// generation it wrote, which the driver sets.
func rollbackReport(in Input, d Decision) Result {
	ro := rolloutOf(in, d)
	st, stable := ro.decision.Status, d.Rollback.Number
	msg := fmt.Sprintf("revision %d failed in %s (%s: %s); revision %d restored",
		in.Revision, clusterList(ro.decision.FailedClusters), st.Reason,
		strings.TrimSuffix(st.Message, fmt.Sprintf("; rolled back to revision %d", stable)), stable)
	return Result{
		Status: &Status{SetRollout: true, Rollout: st,
			Conditions: []metav1.Condition{condition(federation.ConditionRolledBack, metav1.ConditionTrue, ReasonRolloutFailed, msg, in.Object.Generation)}},
		Events: []Event{{Type: federation.EventTypeWarning, Reason: EventRolledBack, Message: msg}},
	}
}
