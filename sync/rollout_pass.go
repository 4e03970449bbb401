package sync

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// rolloutHistory reads the revision history a staged rollout of fed at rev decides from
// (plan.Input.History): only while a rollout is under way (plan.NeedsHistory); a completed
// one needs nothing but status.rollout.
func (s *Syncer) rolloutHistory(ctx context.Context, r federation.Reader, fed *federation.FederatedObject, rev int64) ([]plan.Revision, error) {
	if !plan.NeedsHistory(fed, rev) {
		return nil, nil
	}
	hist, err := s.history(ctx, r, fed)
	if err != nil {
		return nil, err
	}
	return revisionsOf(hist), nil
}

// revisionsOf decodes the history's snapshots; one that does not decode cannot be rolled
// back to and is left out.
func revisionsOf(hist []historyEntry) []plan.Revision {
	out := make([]plan.Revision, 0, len(hist))
	for _, h := range hist {
		var snap plan.Snapshot
		if err := json.Unmarshal(h.data, &snap); err != nil {
			continue
		}
		out = append(out, plan.Revision{Number: h.revision, Name: h.obj.GetName(), Spec: federation.FederatedSpec{
			Template:       federation.RawObject{Object: snap.Template},
			Overrides:      snap.Overrides,
			Placement:      snap.Placement,
			RetainReplicas: snap.RetainReplicas,
		}})
	}
	return out
}

// rollBack restores the stable revision after a failed rollout (Decision.Rollback, with
// spec.rollout.autoRollback): the same restore as [Rollback] (what ran: template, overrides,
// retainReplicas; never the placement nor the replica count), one update of the object as
// read, locked on its resourceVersion, so an edit made meanwhile wins (a Conflict, and the
// next pass decides on it). Sync then propagates the restored spec as a new revision. The
// status says what happened (plan.Report): status.rollout and the RolledBack condition, with
// an event. The object written is plan.RolledBack's: an object a policy generated is marked
// for its generator too.
func (s *Syncer) rollBack(ctx context.Context, p *pass, d plan.Decision) *end {
	stable := d.Rollback
	obj, err := plan.RolledBack(p.u, *stable, s.typ.ReplicasFields())
	if err != nil {
		return failure(fmt.Errorf("sync: roll %s %s back to revision %d: %w", s.typ.Federated.Kind, p.key, stable.Number, err))
	}
	updated, err := s.host.Update(ctx, s.typ.FederatedGVR(), obj)
	if err != nil {
		return failure(fmt.Errorf("sync: roll %s %s back to revision %d: %w", s.typ.Federated.Kind, p.key, stable.Number, err))
	}
	rep := plan.Report(p.in, d, nil)
	s.record(p.u, rep.Events, false)
	for i := range rep.Status.Conditions {
		rep.Status.Conditions[i].ObservedGeneration = updated.GetGeneration() // the restored spec's
	}
	if _, err := s.writeStatus(ctx, updated, rep.Status); err != nil {
		return failure(err)
	}
	return &end{res: federation.Result{RequeueAfter: s.opts.ResyncPeriod}, outcome: "synced"}
}
