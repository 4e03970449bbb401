package sync

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// rolloutPass is a staged rollout's part of one Reconcile pass: the decision, and what the
// status write and the events need to know about where the rollout stood before.
type rolloutPass struct {
	decision RolloutDecision
	prev     *federation.RolloutStatus
	revision int64
	previous *PreviousRevision
}

// rolloutHistory reads the revision history a staged rollout of fed at rev decides from
// (PlanInput.History): only while a rollout is under way (see needsHistory); a completed one
// needs nothing but status.rollout.
func (s *Syncer) rolloutHistory(ctx context.Context, r federation.Reader, fed *federation.FederatedObject, rev int64) ([]Revision, error) {
	if !needsHistory(fed, rev) {
		return nil, nil
	}
	hist, err := s.history(ctx, r, fed)
	if err != nil {
		return nil, err
	}
	return revisionsOf(hist), nil
}

// rolloutOf is the pass's view of Plan's rollout decision d for fed at rev; nil without
// spec.rollout.
func rolloutOf(fed *federation.FederatedObject, rev int64, d Decision) *rolloutPass {
	if d.Rollout == nil {
		return nil
	}
	return &rolloutPass{decision: *d.Rollout, prev: fed.Status.Rollout, revision: rev, previous: d.Previous}
}

// revisionsOf decodes the history's snapshots; one that does not decode cannot be rolled
// back to and is left out.
func revisionsOf(hist []historyEntry) []Revision {
	out := make([]Revision, 0, len(hist))
	for _, h := range hist {
		var snap snapshot
		if err := json.Unmarshal(h.data, &snap); err != nil {
			continue
		}
		out = append(out, Revision{Number: h.revision, Name: h.obj.GetName(), Spec: federation.FederatedSpec{
			Template:       federation.RawObject{Object: snap.Template},
			Overrides:      snap.Overrides,
			Placement:      snap.Placement,
			RetainReplicas: snap.RetainReplicas,
		}})
	}
	return out
}

// complete reports whether every placed cluster is to run the revision (true without a
// rollout): only then is it status.syncedRevision.
func (p *rolloutPass) complete() bool {
	return p == nil || p.decision.Stable == nil
}

// requeue is when the pass wants to come back: earlier than the resync when a stage's time
// runs out.
func (p *rolloutPass) requeue(resync time.Duration) time.Duration {
	if p == nil || p.decision.RequeueAfter <= 0 {
		return resync
	}
	return min(resync, p.decision.RequeueAfter)
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

// setRollout writes status.rollout (removing it when the object has no spec.rollout) and,
// when a newer revision starts rolling out after a rollback, turns RolledBack False.
func (s *Syncer) setRollout(status map[string]any, generation int64, p *rolloutPass) error {
	if p == nil {
		delete(status, "rollout")
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.decision.Status)
	if err != nil {
		return fmt.Errorf("encode status.rollout: %w", err)
	}
	status["rollout"] = m
	if p.newRollout() && p.decision.Stable != nil && conditionTrue(status, federation.ConditionRolledBack) {
		return s.setCondition(status, condition(federation.ConditionRolledBack, metav1.ConditionFalse, ReasonRolloutStarted,
			fmt.Sprintf("revision %d rolls out", p.revision), generation))
	}
	return nil
}

// conditionTrue reports whether status.conditions has the condition typ with status True.
func conditionTrue(status map[string]any, typ string) bool {
	list, _ := status["conditions"].([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["type"] == typ {
			return m["status"] == string(metav1.ConditionTrue)
		}
	}
	return false
}

// events records what the pass changed in the rollout: a stage started, the rollout
// completed or failed. It runs once the status says so.
func (s *Syncer) rolloutEvents(u *unstructured.Unstructured, p *rolloutPass) {
	if p == nil {
		return
	}
	st, d := p.decision.Status, p.decision
	prevStage, prevPhase := int32(0), ""
	if !p.newRollout() {
		prevStage, prevPhase = p.prev.Stage, p.prev.Phase
	}
	switch {
	case d.Failed && !d.Rollback:
		s.event(u, eventWarning, "RolloutFailed", "revision %d: %s", p.revision, st.Message)
	case st.Phase == federation.RolloutComplete && prevPhase != "" && prevPhase != federation.RolloutComplete:
		s.event(u, eventNormal, "RolloutComplete", "revision %d runs in every placed cluster", p.revision)
	case st.Phase != federation.RolloutComplete && st.Stage > prevStage:
		for k := prevStage + 1; k <= st.Stage && int(k) <= len(d.Stages); k++ {
			if stage := d.Stages[k-1]; len(stage.Clusters) > 0 {
				s.event(u, eventNormal, "RolloutStageStarted", "revision %d: stage %d of %d (%s) started in %s",
					p.revision, k, st.Stages, stage.Name, summarize(stage.Clusters))
			}
		}
	}
}

// rollBack restores the stable revision after a failed rollout (spec.rollout.autoRollback):
// the same restore as [Rollback] (what ran: template, overrides, retainReplicas; never the
// placement nor the replica count, see Decision.Stable), one update of the object as read, locked on its
// resourceVersion, so an edit made meanwhile wins (a Conflict, and the next pass decides on
// it). Sync then propagates the restored spec as a new revision. The status says what
// happened: status.rollout and the RolledBack condition, with an event. An object a policy
// generated is marked for its generator too (forGenerator).
func (s *Syncer) rollBack(ctx context.Context, u *unstructured.Unstructured, p *rolloutPass) (federation.Result, string, error) {
	d := p.decision
	key := keyOf(u)
	obj := u.DeepCopy()
	snap := snapshot{Template: d.Stable.Spec.Template.Object, Overrides: d.Stable.Spec.Overrides,
		RetainReplicas: d.Stable.Spec.RetainReplicas}
	if err := restore(obj, snap, false, s.typ.ReplicasFields()); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: roll %s %s back to revision %d: %w", s.typ.Federated.Kind, key, d.Stable.Number, err)
	}
	forGenerator(obj, d.Stable.Number)
	updated, err := s.host.Update(ctx, s.typ.FederatedGVR(), obj)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: roll %s %s back to revision %d: %w", s.typ.Federated.Kind, key, d.Stable.Number, err)
	}
	msg := fmt.Sprintf("revision %d failed in %s (%s: %s); revision %d restored",
		p.revision, clusterList(d.FailedClusters), d.Status.Reason,
		strings.TrimSuffix(d.Status.Message, fmt.Sprintf("; rolled back to revision %d", d.Stable.Number)), d.Stable.Number)
	s.event(u, eventWarning, "RolledBack", "%s", msg)
	cond := condition(federation.ConditionRolledBack, metav1.ConditionTrue, ReasonRolloutFailed, msg, updated.GetGeneration())
	if _, err := s.updateStatus(ctx, updated, func(status map[string]any) error {
		if err := s.setRollout(status, updated.GetGeneration(), p); err != nil {
			return err
		}
		return s.setCondition(status, cond)
	}); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	return federation.Result{RequeueAfter: s.opts.ResyncPeriod}, "synced", nil
}

// forGenerator marks obj, the spec an automated rollback restored, with
// federation.RolledBackAnnotation naming revision when a propagation policy generated it:
// package propagation then restores the template into the native object obj is rendered from
// (sync writes no native object), instead of rendering obj again from the failed one, which
// would undo the rollback.
func forGenerator(obj *unstructured.Unstructured, revision int64) {
	if obj.GetLabels()[federation.GeneratedByLabel] != federation.GeneratedByPropagation {
		return
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[federation.RolledBackAnnotation] = strconv.FormatInt(revision, 10)
	obj.SetAnnotations(ann)
}
