package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
	"github.com/fedkit/fedkit/placement"
)

// waitForScheduleDelay is how soon a pass waiting for the scheduler comes back when no watch
// brings it back first.
const waitForScheduleDelay = 5 * time.Second

// Reconcile syncs one federated object with its member clusters, in one pass:
//
//  1. Read the object. Being deleted: delete (or orphan) its member objects, then remove
//     federation.SyncFinalizer (see the package documentation on deletion). Otherwise make
//     sure it carries the finalizer (a patch).
//  2. With Options.WaitForScheduler, stop here while the scheduler has not scheduled the
//     object's current generation (the Propagated condition says so; see the package
//     documentation on the scheduler). Record its revision (see the package documentation
//     on revisions).
//  3. Decide with [Plan]: where it goes and with how many replicas, during a staged rollout
//     which revision each cluster runs, and what to do in each cluster, from the member
//     objects read through the cluster set's caches where it offers them
//     ([federation.MemberCache]). The pass decides nothing itself: it acts on the Decision.
//  4. Carry out the changes, several clusters at once (Options.ClusterConcurrency), each
//     cluster rate-limited; a Conflict re-reads, re-renders and retries
//     (Options.ConflictRetries) before the pass fails.
//  5. Write status.clusters[].propagation, message and revision, status.syncedRevision,
//     status.observedGeneration and the Propagated condition, only when they changed.
//
// Failures that a retry can fix (an unreachable member, a server error) are returned after
// the status is written, so the caller retries with backoff; bad input (an invalid object or
// placement) is recorded in the Propagated condition and returned wrapped by
// [federation.Terminal]. A failure in one cluster never stops the others. The Result asks
// for a requeue when a periodic check is due. The Result is ignored when the error is not nil.
func (s *Syncer) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return s.reconcileWith(ctx, key, s.host)
}

// reconcileWith is Reconcile reading the host through r: the host itself, or Run's caches.
func (s *Syncer) reconcileWith(ctx context.Context, key federation.Key, r federation.Reader) (federation.Result, error) {
	r = federation.PendingReader(r, s.opts.StatusWriter, s.typ.FederatedGVR())
	p := loop.Pass{Loop: fedmetrics.LoopSync, Type: s.typ.Federated.Kind, Clock: s.opts.Clock, Logger: s.opts.Logger, Observe: s.metrics.observe}
	return p.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) { return s.reconcile(ctx, key, r) })
}

func (s *Syncer) reconcile(ctx context.Context, key federation.Key, r federation.Reader) (federation.Result, string, error) {
	u, err := r.Get(ctx, s.typ.FederatedGVR(), key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		s.forget(key)
		return federation.Result{}, fedmetrics.OutcomeGone, nil
	}
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: get %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	fed, err := s.decode(key, u)
	if err != nil {
		return s.invalid(ctx, u, ReasonInvalidObject, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err))
	}
	if fed.DeletionTimestamp != nil {
		s.metrics.forget(key) // no propagation to wait for any more
		return s.deleteObject(ctx, r, u, fed)
	}
	if errs := federation.ValidateFederatedObject(fed); len(errs) > 0 {
		return s.invalid(ctx, u, ReasonInvalidObject, federation.NewInvalidError(s.typ.Federated.Kind, key, errs))
	}
	s.metrics.changed(key, fed, s.opts.Clock.Now()) // a new generation starts its propagation lag
	if scheduleOutdated(fed) {
		// The scheduler's write for this generation brings the object back.
		return federation.Result{RequeueAfter: waitForScheduleDelay}, fedmetrics.OutcomeUnchanged, nil
	}
	if s.opts.WaitForScheduler {
		if reason, message := scheduleWait(fed); reason != "" {
			return s.waitForScheduler(ctx, u, fed, reason, message)
		}
	}
	clusters, err := s.listClusters(ctx, r)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if scheduledBeforeReady(fed, clusters) {
		// The scheduler's write, after the Cluster's change, brings the object back.
		return federation.Result{RequeueAfter: waitForScheduleDelay}, fedmetrics.OutcomeUnchanged, nil
	}
	rev, err := s.ensureRevision(ctx, r, u, fed)
	if err != nil {
		return s.historyRefused(ctx, u, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err))
	}
	ctx = logr.NewContext(ctx, logr.FromContextOrDiscard(ctx).WithValues("revision", rev))
	// The finalizer (before any member object exists) and the revision, in one write.
	if u, err = s.ensureMeta(ctx, u, rev); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	fed.ResourceVersion = u.GetResourceVersion()

	in := PlanInput{
		Type: s.typ, Object: fed, Clusters: clusters, Revision: rev,
		Identity: s.opts.Identity, Adopt: s.adopt(fed), Renderer: s.opts.Renderer,
		ClusterRemoval: s.opts.ClusterRemoval, WaitForScheduler: s.opts.WaitForScheduler,
		Now: s.opts.Clock.Now(), fields: s.fields,
	}
	if in.History, err = s.rolloutHistory(ctx, r, fed, rev); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	// Where the object goes (and a staged rollout's step) tells which members to read; Plan
	// then decides on what they hold.
	where, err := decideTargets(in)
	if err != nil {
		if errors.Is(err, placement.ErrInvalidPlacement) {
			return s.invalid(ctx, u, ReasonInvalidPlacement, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err))
		}
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	ro := rolloutOf(fed, rev, where)
	if ro != nil && ro.decision.Rollback {
		return s.rollBack(ctx, u, ro)
	}
	in.decided = &where
	in.Members = s.readMembers(ctx, fed, clusters, where.Targets, where.inputs)
	d, err := Plan(in)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	if s.markNamespaces(ctx, &in, d.Changes) {
		d, _ = Plan(in) // the host's own namespaces are orphaned, those in use kept
	}
	targets := d.Targets
	results := s.executeWith(ctx, in, d.inputs, d.Changes)
	// A copy deleted because its cluster left the placement is listed until it is gone: its
	// finalizers may hold it, and what runs there (and its dependencies) is still there.
	s.checkRemoved(ctx, fed, results)
	waitingForNamespace := s.noteNamespaceWaits(ctx, key, results)
	wrote, err := s.writeStatus(ctx, u, fed, rev, targets, results, ro)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if placed, ok := everywhere(results); ok {
		s.metrics.propagated(key, placed, s.opts.Clock.Now())
	}
	if wrote {
		s.rolloutEvents(u, ro)
	}
	if err := retryable(results); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err)
	}
	outcome := fedmetrics.OutcomeUnchanged
	if wrote || anyWrite(results) {
		outcome = fedmetrics.OutcomeWritten
	}
	res := federation.Result{RequeueAfter: ro.requeue(s.opts.ResyncPeriod)}
	if waitingForNamespace {
		// Run's member cache of Namespaces brings the object back when its namespace appears;
		// this bounds the wait where no cache does.
		res.RequeueAfter = min(res.RequeueAfter, namespaceRecheck)
	}
	if slices.ContainsFunc(results, func(r result) bool { return r.Reason == ReasonNamespaceInUse }) {
		// Nothing watches the objects that keep the namespace: look again soon.
		res.RequeueAfter = min(res.RequeueAfter, namespaceRecheck)
	}
	if slices.ContainsFunc(results, func(r result) bool { return !r.Placed && r.Reason == ReasonWaitingForRemoval }) {
		// Run's member caches bring the object back when the copy goes; this bounds the wait
		// where no cache does.
		res.RequeueAfter = min(res.RequeueAfter, deletionRecheck)
	}
	return res, outcome, nil
}

// adopt reports whether fed may take over member objects no federation manages.
func (s *Syncer) adopt(fed *federation.FederatedObject) bool {
	return s.opts.Conflict == ConflictAdopt || fed.GetAnnotations()[federation.AdoptAnnotation] == "true"
}

// invalid records a terminal problem in the Propagated condition and returns the error marked
// terminal. Member objects are left as they are.
func (s *Syncer) invalid(ctx context.Context, u *unstructured.Unstructured, reason string, cause error) (federation.Result, string, error) {
	s.event(u, eventWarning, reason, "%s", fedcond.Truncate(cause.Error(), maxMessage))
	cond := condition(federation.ConditionPropagated, metav1.ConditionFalse, reason, cause.Error(), u.GetGeneration())
	if _, err := s.writeCondition(ctx, u, cond); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, errors.Join(cause, err)
	}
	return federation.Result{}, fedmetrics.OutcomeInvalid, federation.Terminal(cause)
}

// ensureMeta makes sure the federated object carries federation.SyncFinalizer and
// federation.RevisionAnnotation with rev, in one merge patch that carries the resourceVersion
// (optimistic locking: a concurrent change to the finalizers is never lost, it is a Conflict
// and a retry). After a Conflict it patches the object as it is now, in the same pass, when
// only its metadata or status moved (at most statusRetries times).
func (s *Syncer) ensureMeta(ctx context.Context, u *unstructured.Unstructured, rev int64) (*unstructured.Unstructured, error) {
	fields := metaFields(u, rev)
	if len(fields) == 0 {
		return u, nil
	}
	out, err := s.patchMeta(ctx, u, fields)
	for attempt := 0; apierrors.IsConflict(err) && attempt < statusRetries; attempt++ {
		// Most often another loop wrote the status since the read (the scheduler and the
		// collector write as soon as the object appears): read it again and, unless its spec
		// or identity changed, patch that version in this pass rather than requeue the
		// object. The patch stays locked: a finalizer added meanwhile is kept.
		fresh, gerr := s.host.Get(ctx, s.typ.FederatedGVR(), u.GetNamespace(), u.GetName())
		if gerr != nil {
			err = gerr
			break
		}
		if fresh.GetUID() != u.GetUID() || fresh.GetGeneration() != u.GetGeneration() || fresh.GetDeletionTimestamp() != nil ||
			!sameSchedule(u, fresh) {
			// A new spec, a deletion, or a new schedule this pass did not read (it would write
			// the members by the old one, then again): the queue's retry starts a pass on it.
			break
		}
		u = fresh
		if fields = metaFields(u, rev); len(fields) == 0 {
			return u, nil
		}
		out, err = s.patchMeta(ctx, u, fields)
	}
	if err != nil {
		return nil, fmt.Errorf("sync: record the finalizer and revision %d on %s %s: %w", rev, s.typ.Federated.Kind, keyOf(u), err)
	}
	return out, nil
}

// confirmDelete is the proof a pass needs before it deletes a member object because the
// object left the placement: the federated object and the Cluster it read (often from
// caches) are still what the host's API server has, right before the delete. A pass on a
// version the host has moved past (a new spec or schedule, new annotations such as the
// orphan one, a deletion; the Cluster's new taints or labels) would delete on a decision
// nobody holds any more. When anything moved it returns a Conflict: nothing is deleted, and
// the newer version is decided again.
func (s *Syncer) confirmDelete(ctx context.Context, in PlanInput, cluster string) error {
	obj := in.Object
	moved := func(what string) error {
		return apierrors.NewConflict(s.typ.FederatedGVR().GroupResource(), obj.Name,
			fmt.Errorf("%s changed since this pass read it: the member object in %s is not deleted on the old version", what, cluster))
	}
	u, err := s.host.Get(ctx, s.typ.FederatedGVR(), obj.Namespace, obj.Name)
	switch {
	case apierrors.IsNotFound(err):
		return moved("the object")
	case err != nil:
		return fmt.Errorf("confirm %s %s before deleting its member object: %w", s.typ.Federated.Kind, keyOfFed(obj), err)
	case u.GetResourceVersion() != obj.ResourceVersion:
		fresh, err := s.decode(keyOfFed(obj), u)
		if err != nil || !sameDecisionInput(obj, fresh) {
			return moved("the object")
		}
	}
	i := slices.IndexFunc(in.Clusters, func(c federation.Cluster) bool { return c.Name == cluster })
	if i < 0 {
		return nil // not a Cluster any more when read: nothing placement-driven to confirm
	}
	live, err := s.host.Get(ctx, federation.ClusterGVR, "", cluster)
	switch {
	case apierrors.IsNotFound(err):
		return moved("Cluster " + cluster)
	case err != nil:
		return fmt.Errorf("confirm Cluster %s before deleting its member object: %w", cluster, err)
	case live.GetResourceVersion() == in.Clusters[i].ResourceVersion:
		return nil
	}
	if c, err := loop.DecodeCluster(s.host, live); err != nil || !sameCluster(&in.Clusters[i], c) {
		return moved("Cluster " + cluster)
	}
	return nil
}

// sameDecisionInput reports whether two versions of a federated object lead Plan to the same
// deletions: the same object, generation, deletion state, annotations and schedule. Other
// loops' status writes alone move the resourceVersion, not these.
func sameDecisionInput(a, b *federation.FederatedObject) bool {
	return a.UID == b.UID && a.Generation == b.Generation &&
		(a.DeletionTimestamp == nil) == (b.DeletionTimestamp == nil) &&
		maps.Equal(a.Annotations, b.Annotations) && equality.Semantic.DeepEqual(a.Status.Schedule, b.Status.Schedule)
}

// sameCluster reports whether two versions of a Cluster place the same: labels, spec (taints
// among them) and deletion state. Status heartbeats alone do not count.
func sameCluster(a, b *federation.Cluster) bool {
	return a.UID == b.UID && maps.Equal(a.Labels, b.Labels) && (a.DeletionTimestamp == nil) == (b.DeletionTimestamp == nil) &&
		equality.Semantic.DeepEqual(a.Spec, b.Spec)
}

// sameSchedule reports whether a and b carry the same status.schedule.
func sameSchedule(a, b *unstructured.Unstructured) bool {
	sa, _, _ := unstructured.NestedFieldNoCopy(a.Object, "status", "schedule")
	sb, _, _ := unstructured.NestedFieldNoCopy(b.Object, "status", "schedule")
	return equality.Semantic.DeepEqual(sa, sb)
}

// metaFields are the metadata fields ensureMeta must patch on u: the finalizer list with
// federation.SyncFinalizer when it lacks it, the revision annotation when it differs.
func metaFields(u *unstructured.Unstructured, rev int64) map[string]any {
	fields := map[string]any{}
	if fins := u.GetFinalizers(); !slices.Contains(fins, federation.SyncFinalizer) {
		fields["finalizers"] = append(slices.Clone(fins), federation.SyncFinalizer)
	}
	if want := fmt.Sprint(rev); u.GetAnnotations()[federation.RevisionAnnotation] != want {
		fields["annotations"] = map[string]any{federation.RevisionAnnotation: want}
	}
	return fields
}

// patchMeta merge-patches the federated object's metadata with fields, locked on u's
// resourceVersion (a stale one is a Conflict, retried by the caller's queue).
func (s *Syncer) patchMeta(ctx context.Context, u *unstructured.Unstructured, fields map[string]any) (*unstructured.Unstructured, error) {
	return s.hostWrite(keyOf(u), func() (*unstructured.Unstructured, error) {
		return patchLocked(ctx, s.host, s.typ.FederatedGVR(), u, fields)
	})
}

// patchLocked merge-patches u's metadata with fields through c, carrying u's resourceVersion so
// that a concurrent change is a Conflict, never lost.
func patchLocked(ctx context.Context, c federation.ClusterClient, gvr schema.GroupVersionResource, u *unstructured.Unstructured, fields map[string]any) (*unstructured.Unstructured, error) {
	meta := map[string]any{"resourceVersion": u.GetResourceVersion()}
	for k, v := range fields {
		meta[k] = v
	}
	data, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return nil, err
	}
	return c.Patch(ctx, gvr, u.GetNamespace(), u.GetName(), types.MergePatchType, data)
}

// listClusters reads the Cluster objects. One that does not decode cannot be synced to: it is
// logged and left out. Each Cluster is decoded once per resourceVersion (loop.Clusters), so
// a pass over an unchanged fleet decodes nothing. The slice returned for an unchanged fleet
// is shared by every pass (copying it for each pass of each object was a good part of a
// pass's garbage): callers read it and never write to it.
func (s *Syncer) listClusters(ctx context.Context, r federation.Reader) ([]federation.Cluster, error) {
	// Run's reader says when its cache of Clusters has not changed since the last List (the
	// reader behind the status writer's wrapper, which passes Cluster reads through).
	rv, versioned := "", false
	if vr, ok := loop.ReaderFor(r, federation.ClusterGVR).(interface {
		CacheVersion(schema.GroupVersionResource, string) (string, bool)
	}); ok {
		rv, versioned = vr.CacheVersion(federation.ClusterGVR, "")
	}
	s.clusterMu.Lock()
	if versioned && rv != "" && rv == s.clustersRV && s.clusterList != nil {
		out := slices.Clip(s.clusterList) // an append copies
		s.clusterMu.Unlock()
		return out, nil
	}
	s.clusterMu.Unlock()
	out, err := s.clusterDecoder.List(ctx, r, logr.FromContextOrDiscard(ctx))
	if err != nil {
		return nil, fmt.Errorf("sync: list Clusters: %w", err)
	}
	s.clusterMu.Lock()
	defer s.clusterMu.Unlock()
	out = slices.Clip(out) // an append copies
	s.clusterList, s.clustersRV = out, ""
	if versioned {
		s.clustersRV = rv // the version taken before the List (see loop's CacheVersion)
	}
	return out, nil
}

// decode converts and defaults the federated object. The result for a resourceVersion is
// kept, so a pass over an unchanged object does not convert it again; callers get their own
// copy of the struct, whose maps and slices they must not change (nothing in a pass does).
func (s *Syncer) decode(key federation.Key, u *unstructured.Unstructured) (*federation.FederatedObject, error) {
	rv := u.GetResourceVersion()
	s.mu.RLock()
	d, ok := s.decodedObjects[key]
	s.mu.RUnlock()
	if ok && rv != "" && d.ResourceVersion == rv && d.UID == u.GetUID() {
		cp := *d
		if s.opts.StatusWriter != nil {
			// The status may hold changes not written yet (the scheduler's schedule), which
			// the resourceVersion does not tell: it is decoded again.
			cp.Status = federation.FederatedStatus{}
			if st, ok := u.Object["status"].(map[string]any); ok {
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(st, &cp.Status); err != nil {
					return nil, err
				}
			}
		}
		return &cp, nil
	}
	fed, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return nil, err
	}
	federation.DefaultFederatedObject(fed)
	keep := fed
	if s.opts.StatusWriter != nil {
		// The status is decoded again on every pass (above): the copy kept holds none, since
		// status.clusters is most of an object placed in many clusters.
		spec := *fed
		spec.Status = federation.FederatedStatus{}
		keep = &spec
	}
	s.mu.Lock()
	s.decodedObjects[key] = keep
	s.mu.Unlock()
	cp := *fed
	return &cp, nil
}

// forget drops what the Syncer remembers about an object that is gone.
func (s *Syncer) forget(key federation.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.verified, key)
	delete(s.conflicts, key)
	delete(s.revisions, key)
	delete(s.historyStale, key)
	delete(s.decodedObjects, key)
	s.metrics.forget(key)
	delete(s.hostWrites, key)
	for m, set := range s.nsWaits {
		if delete(set, key); len(set) == 0 {
			delete(s.nsWaits, m)
		}
	}
}

func keyOf(u *unstructured.Unstructured) federation.Key {
	return federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
}
