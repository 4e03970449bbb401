package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
	"github.com/fedkit/fedkit/sync/plan"
)

// deleteObject removes a federated object's member objects (or orphans them), then its
// finalizer, as plan.Report says once they are gone or the deletion timed out (see the
// package documentation on deletion). Meanwhile status.clusters lists what still holds it.
func (s *Syncer) deleteObject(ctx context.Context, p *pass) (federation.Result, string, error) {
	fed := p.in.Object
	if !slices.Contains(p.u.GetFinalizers(), federation.SyncFinalizer) {
		s.forget(p.key)
		return federation.Result{}, fedmetrics.OutcomeGone, nil
	}
	d, err := s.decideMembers(ctx, p)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	outcomes := s.execute(ctx, p.in, d)
	outcomes = append(outcomes, s.notReadyHolders(ctx, fed, d.NotReady)...)
	rep := plan.Report(p.in, d, outcomes)
	s.record(p.u, rep.Events, false)
	if rep.Release {
		return s.release(ctx, p.u, p.key, rep.LeftBehind)
	}
	if !rep.DeletionStarted.IsZero() {
		if p.u, err = s.recordDeletionStart(ctx, p.u, rep.DeletionStarted); err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
	}
	if _, err := s.writeStatus(ctx, p.u, rep.Status); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if rep.Retry != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: delete %s %s: %w", s.typ.Federated.Kind, p.key, rep.Retry)
	}
	return federation.Result{RequeueAfter: rep.RequeueAfter}, "deleting", nil
}

// checkRemoved reads again, live, each member object whose delete went through (the
// federated object is being deleted, or the cluster left its placement), into its outcome:
// what is still there (held by its finalizers: the garbage collector's foregroundDeletion, a
// member controller's), or why it could not be read. plan.Report keeps such a cluster listed
// until the copy is gone.
func (s *Syncer) checkRemoved(ctx context.Context, fed *federation.FederatedObject, outcomes []plan.Outcome) {
	ns, name := s.memberName(fed)
	var sent []int
	for i := range outcomes {
		if outcomes[i].Change.Action == plan.ActionDelete && outcomes[i].Wrote {
			sent = append(sent, i)
		}
	}
	forEach(ctx, s.opts.ClusterConcurrency, sent, func(i int) {
		o := &outcomes[i]
		obj, err := s.liveGet(ctx, o.Change.Cluster, ns, name)
		switch {
		case err != nil:
			o.RecheckErr = err
		case obj != nil && obj.GetUID() == o.Change.Live.GetUID():
			o.Remaining = obj
		}
	})
}

// recordDeletionStart records when the wait for the member objects began
// (federation.DeletionStartedAnnotation), replacing a value that was not this deletion's,
// and returns u as written.
func (s *Syncer) recordDeletionStart(ctx context.Context, u *unstructured.Unstructured, start time.Time) (*unstructured.Unstructured, error) {
	if v, ok := u.GetAnnotations()[federation.DeletionStartedAnnotation]; ok {
		logr.FromContextOrDiscard(ctx).Info("Replacing a deletion start that is not this deletion's", "annotation", federation.DeletionStartedAnnotation, "value", v)
	}
	out, err := s.patchMeta(ctx, u, map[string]any{"annotations": map[string]any{federation.DeletionStartedAnnotation: start.Format(time.RFC3339)}})
	if err != nil {
		return nil, fmt.Errorf("sync: record the start of the deletion of %s %s: %w", s.typ.Federated.Kind, keyOf(u), err)
	}
	return out, nil
}

// release removes sync's finalizer; left names the clusters whose objects may be left
// behind (plan.Report's event says so too).
func (s *Syncer) release(ctx context.Context, u *unstructured.Unstructured, key federation.Key, left []string) (federation.Result, string, error) {
	if len(left) > 0 {
		logr.FromContextOrDiscard(ctx).Error(nil, "Deletion timed out; member objects may remain", "clusters", left)
	}
	fins := slices.DeleteFunc(slices.Clone(u.GetFinalizers()), func(f string) bool { return f == federation.SyncFinalizer })
	if _, err := s.patchMeta(ctx, u, map[string]any{"finalizers": fins}); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: remove finalizer of %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	s.forget(key)
	return federation.Result{}, fedmetrics.OutcomeWritten, nil
}

// notReadyHolders checks the clusters that are not ready where fed's copy may be
// (Decision.NotReady) and returns, as outcomes (plan.Outcome.MayHold), those it cannot show
// hold none: the deletion waits for them. A suspected cluster is shown by its member cache,
// else by a live read; any other only by its member cache (without one it holds nothing up).
func (s *Syncer) notReadyHolders(ctx context.Context, fed *federation.FederatedObject, checks []plan.NotReadyCheck) []plan.Outcome {
	var out []plan.Outcome
	for _, c := range checks {
		var holds bool
		cached, known := s.cachedCopy(ctx, fed, c.Cluster)
		switch {
		case known:
			holds = cached
		case c.Suspected:
			holds = !s.liveShowsNoCopy(ctx, fed, c.Cluster)
		default:
			holds = s.hasMemberCache(c.Cluster) // its cache cannot tell: wait, at most the deletion timeout
		}
		if holds {
			out = append(out, plan.Outcome{Change: plan.Change{Cluster: c.Cluster, Reason: plan.ReasonClusterNotReady}, MayHold: true})
		}
	}
	return out
}

// cachedCopy reads fed's object in cluster's member cache: held reports whether the cache
// holds it, managed by this Syncer; known is false when there is no cache or it cannot tell.
func (s *Syncer) cachedCopy(ctx context.Context, fed *federation.FederatedObject, cluster string) (held, known bool) {
	mc, ok := s.clusters.(federation.MemberCache)
	if !ok {
		return false, false
	}
	r, err := mc.CachedReader(cluster, s.typ.TargetGVR())
	if err != nil {
		return false, false
	}
	ns, name := s.memberName(fed)
	obj, err := r.Get(ctx, s.typ.TargetGVR(), ns, name)
	switch {
	case err == nil:
		return plan.ManagedBy(obj, s.opts.Identity), true
	case objectNotFound(err, name):
		return false, true
	}
	return false, false
}

// hasMemberCache reports whether the cluster set keeps a member cache for cluster (it has a
// client for it).
func (s *Syncer) hasMemberCache(cluster string) bool {
	mc, ok := s.clusters.(federation.MemberCache)
	if !ok {
		return false
	}
	_, err := mc.CachedReader(cluster, s.typ.TargetGVR())
	return err == nil
}

// liveShowsNoCopy reports whether a live read of cluster finds no object of fed's of this
// Syncer's (none, one the federation does not manage, or a type the member does not serve).
func (s *Syncer) liveShowsNoCopy(ctx context.Context, fed *federation.FederatedObject, cluster string) bool {
	ns, name := s.memberName(fed)
	obj, err := s.liveGet(ctx, cluster, ns, name)
	switch {
	case err != nil:
		return errors.Is(err, plan.ErrTypeNotServed)
	case obj == nil:
		return true
	}
	return !plan.ManagedBy(obj, s.opts.Identity)
}
