package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/sync/plan"
)

// Reconcile syncs one federated object with its member clusters, in one pass that reads,
// decides, acts and reports:
//
//  1. Read the object and the Clusters. Being deleted: delete (or orphan) its member objects,
//     then remove federation.SyncFinalizer (see the package documentation on deletion).
//  2. Decide with [plan.Decide], in its steps: whether the pass waits for the scheduler (see
//     the package documentation on the scheduler; then nothing else happens); with the
//     revision recorded (see the package documentation on revisions) and the finalizer on
//     the object, where it goes and with how many replicas, during a staged rollout which
//     revision each cluster runs, or a rollback to perform; with the member objects read
//     through the cluster set's caches where it offers them ([federation.MemberCache]),
//     what to do in each cluster. The pass decides nothing itself.
//  3. Carry out the changes, several clusters at once (Options.ClusterConcurrency), each
//     cluster rate-limited; a Conflict re-reads, decides again and retries
//     (Options.ConflictRetries) before the cluster fails.
//  4. Report with [plan.Report]: write status.clusters[].propagation, message and revision,
//     status.syncedRevision, status.observedGeneration, status.rollout and the Propagated
//     condition, only when they changed, and record the events.
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

// pass is what one pass read and the input it decides on.
type pass struct {
	key federation.Key
	r   federation.Reader
	// u is the federated object as read, then as the pass's metadata write left it.
	u  *unstructured.Unstructured
	in plan.Input
}

// end is how a pass that stops before it acts ends.
type end struct {
	res     federation.Result
	outcome string
	err     error
}

func (e *end) values() (federation.Result, string, error) { return e.res, e.outcome, e.err }

// failure ends a pass with err.
func failure(err error) *end { return &end{outcome: fedmetrics.OutcomeError, err: err} }

func (s *Syncer) reconcile(ctx context.Context, key federation.Key, r federation.Reader) (federation.Result, string, error) {
	p, stop := s.read(ctx, key, r)
	if stop != nil {
		return stop.values()
	}
	if p.in.Object.DeletionTimestamp != nil {
		return s.deleteObject(ctx, p)
	}
	ctx, d, stop := s.decide(ctx, p)
	if stop != nil {
		return stop.values()
	}
	outcomes := s.execute(ctx, p.in, d)
	return s.report(ctx, p, plan.Report(p.in, d, outcomes), outcomes)
}

// read reads the federated object and the Clusters, and makes the input of the pass's
// decision. An object that is gone or invalid ends the pass.
func (s *Syncer) read(ctx context.Context, key federation.Key, r federation.Reader) (*pass, *end) {
	u, err := r.Get(ctx, s.typ.FederatedGVR(), key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		s.forget(key)
		return nil, &end{outcome: fedmetrics.OutcomeGone}
	}
	if err != nil {
		return nil, failure(fmt.Errorf("sync: get %s %s: %w", s.typ.Federated.Kind, key, err))
	}
	fed, err := s.decode(key, u)
	if err != nil {
		return nil, s.invalid(ctx, u, plan.ReasonInvalidObject, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, key, err))
	}
	if fed.DeletionTimestamp != nil {
		s.lagEnds(key) // no propagation to wait for any more
	} else {
		if errs := federation.ValidateFederatedObject(fed); len(errs) > 0 {
			return nil, s.invalid(ctx, u, plan.ReasonInvalidObject, federation.NewInvalidError(s.typ.Federated.Kind, key, errs))
		}
		s.lagStarts(key, fed, s.opts.Clock.Now()) // a new generation starts its propagation lag
	}
	clusters, err := s.listClusters(ctx, r)
	if err != nil {
		return nil, failure(err)
	}
	return &pass{key: key, r: r, u: u, in: plan.Input{
		Type: s.typ, Object: fed, Clusters: clusters,
		Identity: s.opts.Identity, Adopt: s.adopt(fed), Renderer: s.opts.Renderer,
		DeleteFromLeavingClusters: s.opts.ClusterRemoval == RemovalDelete, WaitForScheduler: s.opts.WaitForScheduler,
		Now: s.opts.Clock.Now(), Memory: s.memoryOf(key), Schema: s.fields, DeletionTimeout: s.opts.DeletionTimeout,
	}}, nil
}

// decide takes the pass's decision in plan.Decide's steps: whether it waits for the
// scheduler; with the revision recorded, where the object goes (or a rollback to perform);
// with the member objects read, what to do in each cluster. A pass that waits, rolls back or
// cannot decide ends here. The context returned logs the revision.
func (s *Syncer) decide(ctx context.Context, p *pass) (context.Context, plan.Decision, *end) {
	if d, _ := plan.Decide(p.in); d.Wait != nil {
		return ctx, d, s.wait(ctx, p, d)
	}
	fed := p.in.Object
	rev, err := s.ensureRevision(ctx, p.r, p.u, fed)
	if err != nil {
		return ctx, plan.Decision{}, s.historyRefused(ctx, p.u, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, p.key, err))
	}
	ctx = logr.NewContext(ctx, logr.FromContextOrDiscard(ctx).WithValues("revision", rev))
	// The finalizer (before any member object exists) and the revision, in one write.
	if p.u, err = s.ensureMeta(ctx, p.u, rev); err != nil {
		return ctx, plan.Decision{}, failure(err)
	}
	fed.ResourceVersion = p.u.GetResourceVersion()
	p.in.Revision = rev
	if p.in.History, err = s.rolloutHistory(ctx, p.r, fed, rev); err != nil {
		return ctx, plan.Decision{}, failure(fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, p.key, err))
	}
	d, err := s.decideMembers(ctx, p)
	switch {
	case errors.Is(err, placement.ErrInvalidPlacement):
		return ctx, d, s.invalid(ctx, p.u, plan.ReasonInvalidPlacement, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, p.key, err))
	case err != nil:
		return ctx, d, failure(fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, p.key, err))
	case d.Rollback != nil:
		return ctx, d, s.rollBack(ctx, p, d)
	}
	return ctx, d, nil
}

// decideMembers decides where the object goes, reads the member objects that tells it to
// read, and decides what to do in each cluster, reading first the member namespaces a
// deletion needs to know about (Decision.ReadNamespaces).
func (s *Syncer) decideMembers(ctx context.Context, p *pass) (plan.Decision, error) {
	d, err := plan.Decide(p.in)
	if err != nil || d.Rollback != nil {
		return d, err
	}
	p.in.Members = s.readMembers(ctx, p.in.Object, p.in.Clusters, d)
	p.in.Decided = &d
	if d, err = plan.Decide(p.in); err != nil || len(d.ReadNamespaces) == 0 {
		return d, err
	}
	s.readNamespaces(ctx, p.in, d.ReadNamespaces)
	return plan.Decide(p.in)
}

// report writes what the pass came to (rep) and records its events: the status, only when it
// changed, the events of the rollout's steps only then.
func (s *Syncer) report(ctx context.Context, p *pass, rep plan.Result, outcomes []plan.Outcome) (federation.Result, string, error) {
	s.noteNamespaceWaits(ctx, p.key, rep)
	s.record(p.u, rep.Events, false)
	wrote, err := s.writeStatus(ctx, p.u, rep.Status)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	if rep.InSync {
		s.propagated(p.key, rep.Placed)
	}
	if wrote {
		s.record(p.u, rep.Events, true)
	}
	if rep.Retry != nil {
		return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("sync: %s %s: %w", s.typ.Federated.Kind, p.key, rep.Retry)
	}
	outcome := fedmetrics.OutcomeUnchanged
	if wrote || slices.ContainsFunc(outcomes, func(o plan.Outcome) bool { return o.Wrote }) {
		outcome = fedmetrics.OutcomeWritten
	}
	return federation.Result{RequeueAfter: s.requeue(rep)}, outcome, nil
}

// requeue is when the pass comes back: at the resync, or sooner when rep says so.
func (s *Syncer) requeue(rep plan.Result) time.Duration {
	if rep.RequeueAfter > 0 && rep.RequeueAfter < s.opts.ResyncPeriod {
		return rep.RequeueAfter
	}
	return s.opts.ResyncPeriod
}

// adopt reports whether fed may take over member objects no federation manages.
func (s *Syncer) adopt(fed *federation.FederatedObject) bool {
	return s.opts.Conflict == ConflictAdopt || fed.GetAnnotations()[federation.AdoptAnnotation] == "true"
}

// invalid records a terminal problem in the Propagated condition and ends the pass with the
// error marked terminal. Member objects are left as they are.
func (s *Syncer) invalid(ctx context.Context, u *unstructured.Unstructured, reason string, cause error) *end {
	rep := plan.Stopped(reason, cause.Error(), u.GetGeneration())
	s.record(u, rep.Events, false)
	if _, err := s.writeStatus(ctx, u, rep.Status); err != nil {
		return failure(errors.Join(cause, err))
	}
	return &end{outcome: fedmetrics.OutcomeInvalid, err: federation.Terminal(cause)}
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
func (s *Syncer) confirmDelete(ctx context.Context, in plan.Input, cluster string) error {
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
		if err != nil || !plan.SameDeletions(obj, fresh) {
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
	if c, err := loop.DecodeCluster(s.host, live); err != nil || !plan.SamePlacement(&in.Clusters[i], c) {
		return moved("Cluster " + cluster)
	}
	return nil
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
	if d := s.decoded(key); d != nil && rv != "" && d.ResourceVersion == rv && d.UID == u.GetUID() {
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
	s.keepDecoded(key, keep)
	cp := *fed
	return &cp, nil
}

func keyOf(u *unstructured.Unstructured) federation.Key {
	return federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
}
