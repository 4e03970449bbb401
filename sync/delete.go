package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// ReasonDeleting is the Propagated condition's reason while a federated object waits for its
// member objects to be removed.
const ReasonDeleting = "Deleting"

// deletionRecheck is how soon a deletion that waits for clusters comes back when nothing else
// brings it back first.
const deletionRecheck = 30 * time.Second

// deleteObject removes a federated object's member objects (or orphans them), then its
// finalizer. The finalizer goes only once every member object is gone (NotFound), not when its
// delete was sent: one that its own finalizers hold (a foreground deletion, a member
// controller's cleanup) holds it too, and so do clusters that are not ready or unreachable
// and may hold a copy (notReadyHolders: one shown to hold none never does).
// The wait is bounded by Options.DeletionTimeout, counted from the first pass that had to wait
// (federation.DeletionStartedAnnotation, recorded on the object so that a restart does not
// reset it and an outage does not use it up); after that the finalizer is removed anyway and
// what was left behind is reported (an event and the log), so a dead cluster cannot keep a
// federated object forever.
func (s *Syncer) deleteObject(ctx context.Context, r federation.Reader, u *unstructured.Unstructured, fed *federation.FederatedObject) (federation.Result, string, error) {
	key := keyOfFed(fed)
	if !slices.Contains(u.GetFinalizers(), federation.SyncFinalizer) {
		s.forget(key)
		return federation.Result{}, fedmetrics.OutcomeGone, nil
	}
	clusters, err := s.listClusters(ctx, r)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	members := s.readMembers(ctx, fed, clusters, Targets{}, nil)
	in := PlanInput{
		Type: s.typ, Object: fed, Clusters: clusters, Members: members,
		Identity: s.opts.Identity, Renderer: s.opts.Renderer,
	}
	d, err := Plan(in)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if s.markNamespaces(ctx, &in, d.Changes) {
		d, _ = Plan(in) // the host's own namespaces are orphaned, those in use kept
	}
	results := s.executeWith(ctx, in, d.inputs, d.Changes)
	s.checkRemoved(ctx, fed, results)

	// What still holds the finalizer: failures, objects still being removed, namespaces that
	// still hold what the federation placed there (ReasonNamespaceInUse), and clusters
	// that are not ready but may have the object (notReadyHolders).
	blocked := map[string]string{}
	messages := map[string]string{}
	for _, r := range results {
		if r.err != nil || r.Reason == ReasonWaitingForRemoval || r.Reason == ReasonClusterUnreachable || r.Reason == ReasonNamespaceInUse {
			blocked[r.Cluster] = r.Reason
			messages[r.Cluster] = r.Message
		}
	}
	for n := range s.notReadyHolders(ctx, fed, clusters, blocked) {
		blocked[n] = ReasonClusterNotReady
	}
	if len(blocked) == 0 {
		return s.release(ctx, u, key, nil)
	}
	u, since, err := s.deletionStart(ctx, u, fed)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if waited := s.opts.Clock.Since(since); waited >= s.opts.DeletionTimeout {
		return s.release(ctx, u, key, blocked)
	}
	entries := map[string]memberEntry{}
	names := make([]string, 0, len(blocked))
	for n, reason := range blocked {
		msg := messages[n]
		if msg == "" || reason != ReasonWaitingForRemoval {
			msg = fmt.Sprintf("cluster %q: the member object is not removed yet (%s)", n, reason)
		}
		entries[n] = memberEntry{propagation: reason, message: msg}
		names = append(names, n+": "+reason)
	}
	slices.Sort(names)
	cond := condition(federation.ConditionPropagated, "False", ReasonDeleting,
		fmt.Sprintf("waiting for member objects to be removed: %s", summarize(names)), fed.Generation)
	if _, err := s.updateStatus(ctx, u, func(status map[string]any) error {
		setMemberEntries(status, entries)
		return s.setCondition(status, cond)
	}); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if err := retryable(results); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: delete %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	remaining := s.opts.DeletionTimeout - s.opts.Clock.Since(since)
	return federation.Result{RequeueAfter: min(max(remaining, time.Second), deletionRecheck)}, "deleting", nil
}

// checkRemoved reads again, live, each member object whose delete was just sent (the
// federated object is being deleted, or the cluster left its placement): one that is still
// there (held by its finalizers: the garbage collector's foregroundDeletion, a member
// controller's) is not removed yet, and its result says ReasonWaitingForRemoval with the
// finalizers that hold it, so status.clusters keeps listing the cluster. One that cannot be
// read is not known to be gone either.
func (s *Syncer) checkRemoved(ctx context.Context, fed *federation.FederatedObject, results []result) {
	ns, name := s.memberName(fed)
	var sent []int
	for i := range results {
		if results[i].Action == ActionDelete && results[i].wrote {
			sent = append(sent, i)
		}
	}
	forEach(ctx, s.opts.ClusterConcurrency, sent, func(i int) {
		r := &results[i]
		obj, err := s.liveGet(ctx, r.Cluster, ns, name)
		switch {
		case err != nil:
			r.Reason, r.Message = readFailure(r.Cluster, err)
			r.err, r.transient = err, true
		case obj != nil && obj.GetUID() == r.Live.GetUID():
			r.Reason = ReasonWaitingForRemoval
			r.Message = fmt.Sprintf("cluster %q: %s is being deleted; its finalizers hold it: %s", r.Cluster, describe(obj), strings.Join(obj.GetFinalizers(), ", "))
		}
	})
}

// deletionStart returns when the wait for fed's member objects began: the time that
// federation.DeletionStartedAnnotation records, or now, which it then records (u is returned
// as written). A value that does not parse, or is older than the deletionTimestamp (copied
// from another object: it was not written for this deletion), is replaced. The time recorded
// is never before the deletionTimestamp, so a clock behind the host's cannot make it look
// copied.
func (s *Syncer) deletionStart(ctx context.Context, u *unstructured.Unstructured, fed *federation.FederatedObject) (*unstructured.Unstructured, time.Time, error) {
	deleted := fed.DeletionTimestamp.Time
	if v, ok := u.GetAnnotations()[federation.DeletionStartedAnnotation]; ok {
		t, err := time.Parse(time.RFC3339, v)
		if err == nil && !t.Before(deleted) {
			return u, t, nil
		}
		logr.FromContextOrDiscard(ctx).Info("Replacing a deletion start that is not this deletion's", "annotation", federation.DeletionStartedAnnotation, "value", v)
	}
	now := s.opts.Clock.Now().UTC().Truncate(time.Second) // what RFC 3339 keeps
	if now.Before(deleted) {
		now = deleted.UTC()
	}
	out, err := s.patchMeta(ctx, u, map[string]any{"annotations": map[string]any{federation.DeletionStartedAnnotation: now.Format(time.RFC3339)}})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("sync: record the start of the deletion of %s %s: %w", s.typ.Federated.Kind, keyOfFed(fed), err)
	}
	return out, now, nil
}

// release removes sync's finalizer; left names the clusters whose objects were left behind.
func (s *Syncer) release(ctx context.Context, u *unstructured.Unstructured, key federation.Key, left map[string]string) (federation.Result, string, error) {
	if len(left) > 0 {
		names := make([]string, 0, len(left))
		for n, reason := range left {
			names = append(names, n+" ("+reason+")")
		}
		slices.Sort(names)
		s.event(u, eventWarning, "MembersLeftBehind",
			"deletion timed out after %s: member objects may remain in %s", s.opts.DeletionTimeout, summarize(names))
		logr.FromContextOrDiscard(ctx).Error(nil, "Deletion timed out; member objects may remain", "clusters", names)
	}
	fins := slices.DeleteFunc(slices.Clone(u.GetFinalizers()), func(f string) bool { return f == federation.SyncFinalizer })
	if _, err := s.patchMeta(ctx, u, map[string]any{"finalizers": fins}); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: remove finalizer of %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	s.forget(key)
	return federation.Result{}, fedmetrics.OutcomeWritten, nil
}

// neverPlacedMargin is how long before a federated object was made a cluster must have
// turned not Ready for sync to hold that it never wrote the object there: the time it takes
// the host's caches to bring the monitor's Ready False to sync, and more than any skew between
// the monitor's clock and the host's.
const neverPlacedMargin = time.Minute

// notReadyHolders returns the clusters that are not ready, not blocked yet, and may hold fed's
// copy: the deletion waits for them. Sync writes only to Ready clusters, so it shows a cluster
// holds no copy in two ways. The cluster has not been Ready since before fed was made (its
// Ready condition turned False or Unknown more than neverPlacedMargin before fed's
// creationTimestamp): sync never placed fed there. Or a read finds no copy of sync's: the
// member cache (which keeps what a cluster that is not ready last held) or, without one or
// when it cannot tell, a live read. A cluster that sync has reason to think holds a copy
// (status.clusters lists it, or placement selects it but for its readiness; status.clusters
// may miss a create whose status write failed) waits unless so shown. Any other waits only
// when its member cache shows a copy of sync's or cannot tell (placement may have moved away
// from a cluster that is not ready, and status with it).
func (s *Syncer) notReadyHolders(ctx context.Context, fed *federation.FederatedObject, clusters []federation.Cluster, blocked map[string]string) map[string]bool {
	suspects := map[string]bool{}
	for _, c := range fed.Status.Clusters {
		suspects[c.Name] = true
	}
	if t, err := TargetsFor(fed, s.typ, clusters, s.opts.Clock.Now()); err == nil {
		for _, n := range t.NotReady {
			suspects[n] = true
		}
	}
	out := map[string]bool{}
	for i := range clusters {
		c := &clusters[i]
		n := c.Name
		if blocked[n] != "" || meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) || notReadySince(c, fed.CreationTimestamp.Time) {
			continue
		}
		cached, known := s.cachedCopy(ctx, fed, n)
		switch {
		case known && cached:
			out[n] = true
		case known:
		case suspects[n]:
			out[n] = !s.liveShowsNoCopy(ctx, fed, n)
		default:
			out[n] = s.hasMemberCache(n) // its cache cannot tell: wait, at most the deletion timeout
		}
	}
	return out
}

// notReadySince reports whether c's Ready condition has not been True since more than
// neverPlacedMargin before t.
func notReadySince(c *federation.Cluster, t time.Time) bool {
	cond := meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady)
	return cond != nil && cond.Status != metav1.ConditionTrue && !t.IsZero() &&
		cond.LastTransitionTime.Add(neverPlacedMargin).Before(t)
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
		return managedBy(obj, s.opts.Identity), true
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
		return typeNotServed(err)
	case obj == nil:
		return true
	}
	return !managedBy(obj, s.opts.Identity)
}
