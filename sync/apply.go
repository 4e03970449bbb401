package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// result is what carrying out one Change came to.
type result struct {
	Change
	// wrote is true when a write succeeded.
	wrote bool
	// err is the last write's error, if it failed.
	err error
	// transient marks an error a later retry may not see (a network failure, a server error,
	// a Conflict that outlived the retries); the object is then requeued with backoff.
	transient bool
	// warnings are what the member answered a create or update that succeeded with (its
	// Warning headers), then the fields Plan found it would drop (Change.Unknown) that it did
	// not warn about itself.
	warnings []string
}

// executeWith carries out Plan's changes, Options.ClusterConcurrency clusters at a time, with
// the clusters' render input keys (Decision.inputs). It never stops on a failure: every
// cluster gets its result.
func (s *Syncer) executeWith(ctx context.Context, in PlanInput, keys map[string]string, changes []Change) []result {
	out := make([]result, len(changes))
	var writes []int
	for i := range changes {
		if changes[i].Action == ActionNone {
			out[i] = s.settle(in, keys, changes[i])
			continue
		}
		writes = append(writes, i)
	}
	forEach(ctx, s.opts.ClusterConcurrency, writes, func(i int) {
		out[i] = s.apply(ctx, in, keys, changes[i])
	})
	s.passEvents(in.Object, out)
	return out
}

// settle records what an ActionNone change means for the Syncer's memory: the object as read
// is in line with the render, or the name is someone else's.
func (s *Syncer) settle(in PlanInput, keys map[string]string, ch Change) result {
	key := keyOfFed(in.Object)
	switch {
	case ch.Reason == "" && ch.Live != nil && managedBy(ch.Live, identityOr(in.Identity)):
		s.setVerified(key, ch.Cluster, verification{rv: ch.Live.GetResourceVersion(), input: keys[ch.Cluster], dropped: s.verifiedAt(key, ch.Cluster).dropped})
	case ch.Reason == ReasonInvalidMember:
		// Plan did not send it (see refusedMember): it waits for the object to change.
		s.event(in.Object, eventWarning, ch.Reason, "%s", ch.Message)
	case ch.Reason == ReasonAlreadyExists || ch.Reason == ReasonManagedByOther:
		s.setConflicted(key, ch.Cluster, true)
	case ch.Live == nil && ch.Reason == "":
		s.setConflicted(key, ch.Cluster, false)
	case ch.Reason == ReasonClusterUnreachable, ch.Reason == ReasonNamespaceCheckFailed, setHasNoClient(in, ch):
		// The member (or what a namespace's deletion must check) could not be read: retry the
		// object with backoff.
		err := in.Members[ch.Cluster].Err
		if err == nil {
			err = errors.New(ch.Message)
		}
		return result{Change: ch, err: err, transient: true}
	}
	return result{Change: ch}
}

// setHasNoClient reports whether ch is a member read that failed because the cluster set has
// no client for a cluster whose Cluster object says Ready (ErrClusterNotFound or
// ErrClusterNotReady from the set): a set builds its clients on its own watch of the Clusters
// and Secrets, so a pass can come before the client, or while it is rebuilt after a
// credentials change, and no Cluster change follows to bring the object back. The pass is
// retried with backoff, as for an unreachable member, rather than wait for the resync.
func setHasNoClient(in PlanInput, ch Change) bool {
	return (ch.Reason == ReasonClusterNotFound || ch.Reason == ReasonClusterNotReady) && in.Members[ch.Cluster].Err != nil
}

// apply carries out one cluster's change. A Conflict (or an AlreadyExists on create) re-reads
// the member object, decides again with the fresh object and retries, up to
// Options.ConflictRetries times.
func (s *Syncer) apply(ctx context.Context, in PlanInput, keys map[string]string, ch Change) result {
	key := keyOfFed(in.Object)
	client, err := s.memberClient(ch.Cluster)
	if err != nil {
		return s.failed(in, ch, err)
	}
	for attempt := 0; ; attempt++ {
		if ch.Action == ActionNone {
			return s.settle(in, keys, ch)
		}
		if err := s.limits.wait(ctx, ch.Cluster); err != nil {
			return s.failed(in, ch, err)
		}
		if ch.Action == ActionCreate || (ch.Action == ActionUpdate && !managedBy(ch.Live, identityOr(in.Identity))) {
			// Before the first object of this type goes to the cluster (created or adopted),
			// the Cluster is held: it may not leave the federation before sync cleaned up.
			if err := s.holdCluster(ctx, ch.Cluster, clusterUID(in.Clusters, ch.Cluster)); err != nil {
				return s.failed(in, ch, err)
			}
		}
		if ch.Action == ActionDelete && in.Object.DeletionTimestamp == nil {
			if err := s.confirmDelete(ctx, in, ch.Cluster); err != nil {
				return s.failed(in, ch, err)
			}
		}
		s.startWrite(key, ch.Cluster)
		var warned warnings
		stored, err := s.write(federation.WithWarningHandler(ctx, warned.add), client, ch)
		written := ""
		if err == nil {
			s.succeeded(in, keys, ch, stored) // recorded before the write stops being in flight
			if stored != nil && ch.Action != ActionDelete {
				written = stored.GetResourceVersion()
			}
		}
		s.endWrite(key, ch.Cluster, written)
		if err == nil {
			if ch.Action == ActionDelete && s.typ.Namespaced {
				s.releaseNamespace(ctx, client, ch.Cluster, ch.Live.GetNamespace(), ch.Live)
			}
			return result{Change: ch, wrote: true, warnings: warned.of(ch)}
		}
		if ch.Action == ActionCreate && namespaceMissing(err, ch.Desired.GetNamespace()) && attempt < s.opts.ConflictRetries {
			if reason, msg, nerr := s.ensureNamespace(ctx, client, ch.Cluster, ch.Desired.GetNamespace(), in.Clusters); nerr != nil || reason != "" {
				if nerr != nil {
					return s.failed(in, ch, nerr)
				}
				ch.Reason, ch.Message = reason, msg
				return result{Change: ch}
			}
			continue
		}
		retry := apierrors.IsConflict(err) || (ch.Action == ActionCreate && apierrors.IsAlreadyExists(err))
		if !retry || attempt >= s.opts.ConflictRetries {
			return s.failed(in, ch, err)
		}
		// Someone else wrote first: decide again on what is there now.
		ns, name := s.memberName(in.Object)
		live, gerr := s.liveGet(ctx, ch.Cluster, ns, name)
		if gerr != nil {
			return s.failed(in, ch, gerr)
		}
		v := s.verifiedAt(key, ch.Cluster)
		ch = s.replan(in, ch, MemberState{Object: live, memo: v, Host: in.Members[ch.Cluster].Host, InUse: in.Members[ch.Cluster].InUse})
	}
}

// warnings collects the warnings of one member write (federation.WithWarningHandler).
type warnings struct {
	mu   gosync.Mutex
	list []string
}

func (w *warnings) add(warning string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, warning)
}

// of returns the warnings of ch's write, a create or update: the member's, then those of the
// fields Plan found its type does not have (Change.Unknown) that the member did not give (an
// older server drops them without a word).
func (w *warnings) of(ch Change) []string {
	if ch.Action != ActionCreate && ch.Action != ActionUpdate {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.list)
	for _, p := range ch.Unknown {
		if msg := federation.UnknownFieldWarning(p); !slices.Contains(out, msg) {
			out = append(out, msg)
		}
	}
	return out
}

// write sends one change to the member.
func (s *Syncer) write(ctx context.Context, c federation.ClusterClient, ch Change) (*unstructured.Unstructured, error) {
	gvr := s.typ.TargetGVR()
	switch ch.Action {
	case ActionCreate:
		return c.Create(ctx, gvr, ch.Desired)
	case ActionUpdate:
		obj := ch.Desired
		if obj.GetResourceVersion() == "" && ch.Live != nil {
			// The retention table keeps resourceVersion; a custom one might not. Updates are
			// always locked on the version read.
			obj = obj.DeepCopy()
			obj.SetResourceVersion(ch.Live.GetResourceVersion())
		}
		return c.Update(ctx, gvr, obj)
	case ActionDelete:
		uid, rv := ch.Live.GetUID(), ch.Live.GetResourceVersion()
		// Preconditions: never delete an object that was replaced, or changed (perhaps
		// unlabelled by its owner) since it was read.
		// The propagation policy is always set: a kind's own default may orphan (batch/v1
		// Jobs orphan their Pods).
		policy := s.opts.DeletionPropagation
		err := c.Delete(ctx, gvr, ch.Live.GetNamespace(), ch.Live.GetName(), metav1.DeleteOptions{
			Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
			PropagationPolicy: &policy,
		})
		if apierrors.IsNotFound(err) {
			return nil, nil // gone already
		}
		return nil, err
	case ActionOrphan:
		if ch.Desired != nil {
			return c.Update(ctx, gvr, ch.Desired) // a released copy (federation.ReleasedAnnotation)
		}
		return c.Update(ctx, gvr, unlabelled(ch.Live))
	}
	return nil, fmt.Errorf("sync: unknown action %q", ch.Action)
}

// unlabelled is obj without the federation's labels and annotations: what an orphaned member
// object keeps.
func unlabelled(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	labels := out.GetLabels()
	for _, k := range []string{federation.ManagedByLabel, federation.FederatedNameLabel, federation.FederatedNamespaceLabel} {
		delete(labels, k)
	}
	out.SetLabels(labels)
	ann := out.GetAnnotations()
	for _, k := range []string{federation.RevisionAnnotation, federation.DesiredHashAnnotation,
		federation.ManagedLabelsAnnotation, federation.ManagedAnnotationsAnnotation, federation.ManagedFinalizersAnnotation} {
		delete(ann, k)
	}
	out.SetAnnotations(ann)
	return out
}

// succeeded records a successful write in the Syncer's memory.
func (s *Syncer) succeeded(in PlanInput, keys map[string]string, ch Change, stored *unstructured.Unstructured) {
	key := keyOfFed(in.Object)
	switch ch.Action {
	case ActionCreate, ActionUpdate:
		v, ok := verification{}, false
		if stored != nil {
			// What the server did not keep of the render, it never will: not drift.
			dropped := ownedDiff(ch.Desired.Object, stored.Object, in.memberSchema())
			v, ok = verification{rv: stored.GetResourceVersion(), input: keys[ch.Cluster], dropped: dropped}, true
		}
		s.wrote(key, ch.Cluster, v, ok)
	default:
		s.wrote(key, ch.Cluster, verification{}, true)
	}
	if ch.Action == ActionOrphan && protectedNamespace(ch.Reason) {
		s.event(in.Object, eventWarning, ch.Reason, "%s", ch.Message)
	}
	// The other writes are reported once per pass, by passEvents.
}

// failed turns a failed change into its result: the propagation reason and message, and
// whether a retry could help.
func (s *Syncer) failed(in PlanInput, ch Change, err error) result {
	res := result{Change: ch, err: err, transient: true}
	msg := fedcond.Truncate(fmt.Sprintf("cluster %q: %v", ch.Cluster, err), maxMessage)
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		res.Reason = ReasonClusterUnreachable
	case errors.Is(err, federation.ErrUnreachable):
		res.Reason = ReasonClusterUnreachable
	case errors.Is(err, federation.ErrClusterNotFound):
		res.Reason = ReasonClusterNotFound // see setHasNoClient: retried with backoff
	case errors.Is(err, federation.ErrClusterNotReady):
		res.Reason = ReasonClusterNotReady
	case typeNotServed(err), ch.Action == ActionCreate && apierrors.IsNotFound(err):
		res.Reason, res.transient = ReasonTypeNotServed, false
	case isTerminating(err):
		res.Reason = ReasonNamespaceTerminating
	default:
		res.Reason = map[Action]string{
			ActionCreate: ReasonCreationFailed, ActionUpdate: ReasonUpdateFailed,
			ActionDelete: ReasonDeletionFailed, ActionOrphan: ReasonDeletionFailed,
		}[ch.Action]
		if res.Reason == "" {
			res.Reason = ReasonClusterUnreachable
		}
		// The member refused the object itself: only a change to it can help.
		res.transient = !(apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
			apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) ||
			apierrors.IsUnsupportedMediaType(err) || apierrors.IsRequestEntityTooLargeError(err))
	}
	res.Message = msg
	s.event(in.Object, eventWarning, res.Reason, "%s", msg)
	return res
}

// isTerminating reports the NamespaceLifecycle refusal of a create in a namespace being deleted.
func isTerminating(err error) bool {
	if !apierrors.IsForbidden(err) {
		return false
	}
	return strings.Contains(err.Error(), "is being terminated") || apierrors.HasStatusCause(err, "NamespaceTerminating")
}

// replan decides one cluster again from a fresh read (after a Conflict): Plan, with the pass's
// decision of where the object goes (in.decided) and ms as the cluster's only member read.
func (s *Syncer) replan(in PlanInput, ch Change, ms MemberState) Change {
	in.Members = map[string]MemberState{ch.Cluster: ms}
	if d, err := Plan(in); err == nil {
		for _, next := range d.Changes {
			if next.Cluster == ch.Cluster {
				return next
			}
		}
	}
	return Change{Cluster: ch.Cluster, Placed: ch.Placed, Live: ms.Object, Revision: ch.Revision}
}

// retryable joins the errors of the results a retry may fix, as ClusterErrors.
func retryable(results []result) error {
	var errs []error
	for _, r := range results {
		if r.err != nil && r.transient {
			op := strings.ToLower(string(r.Action))
			if r.Action == ActionNone {
				op = "get" // the member could not be read
			}
			errs = append(errs, &federation.ClusterError{Cluster: r.Cluster, Op: op, Err: r.err})
		}
	}
	return errors.Join(errs...)
}

func anyWrite(results []result) bool {
	for _, r := range results {
		if r.wrote {
			return true
		}
	}
	return false
}

func keyOfFed(fed *federation.FederatedObject) federation.Key {
	return federation.Key{Namespace: fed.Namespace, Name: fed.Name}
}
