package sync

import (
	"context"
	"fmt"
	gosync "sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/sync/plan"
)

// execute carries out d's changes, Options.ClusterConcurrency clusters at a time, and returns
// what came of each, in d.Changes' order. It never stops on a failure: every cluster gets
// its outcome. A member object deleted is read again right after (see checkRemoved).
func (s *Syncer) execute(ctx context.Context, in plan.Input, d plan.Decision) []plan.Outcome {
	out := make([]plan.Outcome, len(d.Changes))
	var writes []int
	for i, ch := range d.Changes {
		if ch.Action == plan.ActionNone {
			s.settle(in, d, ch)
			out[i] = plan.Outcome{Change: ch}
			continue
		}
		writes = append(writes, i)
	}
	forEach(ctx, s.opts.ClusterConcurrency, writes, func(i int) {
		out[i] = s.apply(ctx, in, d, d.Changes[i])
	})
	s.checkRemoved(ctx, in.Object, out)
	return out
}

// settle records what an ActionNone change means for the Syncer's memory: the object as read
// is in line with the render, or the name is someone else's.
func (s *Syncer) settle(in plan.Input, d plan.Decision, ch plan.Change) {
	key := keyOfFed(in.Object)
	switch {
	case ch.Reason == "" && ch.Live != nil && plan.ManagedBy(ch.Live, s.opts.Identity):
		s.setVerified(key, ch.Cluster, plan.Verified{ResourceVersion: ch.Live.GetResourceVersion(), Input: d.Keys[ch.Cluster], Dropped: s.verifiedAt(key, ch.Cluster).Dropped})
	case ch.Reason == plan.ReasonAlreadyExists || ch.Reason == plan.ReasonManagedByOther:
		s.setConflicted(key, ch.Cluster, true)
	case ch.Live == nil && ch.Reason == "":
		s.setConflicted(key, ch.Cluster, false)
	}
}

// apply carries out one cluster's change. A Conflict (or an AlreadyExists on create) re-reads
// the member object, decides again with the fresh object and retries, up to
// Options.ConflictRetries times; a create whose namespace is missing creates it first (see
// ensureNamespace).
func (s *Syncer) apply(ctx context.Context, in plan.Input, d plan.Decision, ch plan.Change) plan.Outcome {
	client, err := s.memberClient(ch.Cluster)
	if err != nil {
		return plan.Outcome{Change: ch, Err: err}
	}
	for attempt := 0; ; attempt++ {
		if ch.Action == plan.ActionNone {
			s.settle(in, d, ch)
			return plan.Outcome{Change: ch}
		}
		o := s.applyOnce(ctx, in, d, client, ch)
		if o.Err == nil || attempt >= s.opts.ConflictRetries {
			return o
		}
		next, done := s.recover(ctx, in, d, client, o)
		if done != nil {
			return *done
		}
		ch = next
	}
}

// applyOnce sends one cluster's change, with what it needs first: a token of the cluster's
// rate limit, the Cluster held before the first object of the type goes there, the proof a
// delete needs.
func (s *Syncer) applyOnce(ctx context.Context, in plan.Input, d plan.Decision, client federation.ClusterClient, ch plan.Change) plan.Outcome {
	if err := s.prepare(ctx, in, ch); err != nil {
		return plan.Outcome{Change: ch, Err: err}
	}
	key := keyOfFed(in.Object)
	s.startWrite(key, ch.Cluster)
	var warned warnings
	stored, err := s.send(federation.WithWarningHandler(ctx, warned.add), client, s.writeOf(in, d, ch))
	written := ""
	if err == nil {
		s.succeeded(in, d, ch, stored) // recorded before the write stops being in flight
		if stored != nil && ch.Action != plan.ActionDelete {
			written = stored.GetResourceVersion()
		}
	}
	s.endWrite(key, ch.Cluster, written)
	if err != nil {
		return plan.Outcome{Change: ch, Err: err}
	}
	if ch.Action == plan.ActionDelete && s.typ.Namespaced {
		s.releaseNamespace(ctx, client, ch.Cluster, ch.Live.GetNamespace(), ch.Live)
	}
	return plan.Outcome{Change: ch, Wrote: true, Warnings: warned.list()}
}

// prepare is what a change needs before it is sent: a token of the cluster's rate limit; the
// Cluster held (see holdCluster) before the first object of this type goes there, created or
// adopted; for a delete because the object left the placement, the proof that the decision
// still holds (see confirmDelete).
func (s *Syncer) prepare(ctx context.Context, in plan.Input, ch plan.Change) error {
	if err := s.limits.wait(ctx, ch.Cluster); err != nil {
		return err
	}
	if ch.Action == plan.ActionCreate || (ch.Action == plan.ActionUpdate && !plan.ManagedBy(ch.Live, s.opts.Identity)) {
		if err := s.holdCluster(ctx, ch.Cluster, clusterUID(in.Clusters, ch.Cluster)); err != nil {
			return err
		}
	}
	if ch.Action == plan.ActionDelete && in.Object.DeletionTimestamp == nil {
		return s.confirmDelete(ctx, in, ch.Cluster)
	}
	return nil
}

// recover handles a failed write o that a retry may fix: a create whose namespace is missing
// creates it (or, when a FederatedNamespace governs it, ends with the object waiting for
// it); a Conflict, or an AlreadyExists on create, reads the member object again and decides
// again on it. done is the outcome when there is nothing to retry.
func (s *Syncer) recover(ctx context.Context, in plan.Input, d plan.Decision, client federation.ClusterClient, o plan.Outcome) (next plan.Change, done *plan.Outcome) {
	ch, err := o.Change, o.Err
	if ch.Action == plan.ActionCreate && namespaceMissing(err, ch.Desired.GetNamespace()) {
		governing, nerr := s.ensureNamespace(ctx, client, ch.Cluster, ch.Desired.GetNamespace())
		switch {
		case nerr != nil:
			return ch, &plan.Outcome{Change: ch, Err: nerr}
		case governing != nil:
			return ch, &plan.Outcome{Change: ch, Governing: governing}
		}
		return ch, nil
	}
	if !apierrors.IsConflict(err) && !(ch.Action == plan.ActionCreate && apierrors.IsAlreadyExists(err)) {
		return ch, &o
	}
	// Someone else wrote first: decide again on what is there now.
	ns, name := s.memberName(in.Object)
	live, gerr := s.liveGet(ctx, ch.Cluster, ns, name)
	if gerr != nil {
		return ch, &plan.Outcome{Change: ch, Err: gerr}
	}
	return s.replan(in, d, ch, plan.MemberState{Object: live, Namespace: in.Members[ch.Cluster].Namespace}), nil
}

// replan decides one cluster again from a fresh read (after a Conflict): Decide, with the
// pass's decision of where the object goes (Input.Decided) and ms as the cluster's only
// member read.
func (s *Syncer) replan(in plan.Input, d plan.Decision, ch plan.Change, ms plan.MemberState) plan.Change {
	in.Members = map[string]plan.MemberState{ch.Cluster: ms}
	in.Decided = &d
	if next, err := plan.Decide(in); err == nil && len(next.ReadNamespaces) == 0 {
		for _, c := range next.Changes {
			if c.Cluster == ch.Cluster {
				return c
			}
		}
	}
	return plan.Change{Cluster: ch.Cluster, Placed: ch.Placed, Live: ms.Object, Revision: ch.Revision}
}

// warnings collects the warnings of one member write (federation.WithWarningHandler).
type warnings struct {
	mu    gosync.Mutex
	items []string
}

func (w *warnings) add(warning string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.items = append(w.items, warning)
}

// list returns the warnings collected.
func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.items
}

// memberWrite is one write to a member cluster that a pass decided: a Change's, or the
// namespace it needs (created for it) or leaves (deleted after it).
type memberWrite struct {
	gvr    schema.GroupVersionResource
	action plan.Action
	// desired is what a create or update writes; live what an update or delete writes over
	// (its version and uid are the write's preconditions).
	desired, live *unstructured.Unstructured
	// propagation is a delete's propagationPolicy; nil: none (a namespace's).
	propagation *metav1.DeletionPropagation
	// gated is set when the write goes through the gate, as gate: every delete, orphaning
	// and adoption, a Secret's create and update.
	gated bool
	gate  gate.Write
}

// writeOf is the write of a Change of d, with the evidence d was decided on
// (plan.GateWrite).
func (s *Syncer) writeOf(in plan.Input, d plan.Decision, ch plan.Change) memberWrite {
	w := memberWrite{gvr: s.typ.TargetGVR(), action: ch.Action, desired: ch.Desired, live: ch.Live, propagation: &s.opts.DeletionPropagation}
	w.gate, w.gated = plan.GateWrite(in, d, ch)
	return w
}

// send is the one function that writes to a member cluster: every create, update, delete and
// orphaning a pass decided goes through it, a member object's and the namespace it needs or
// leaves. Updates are locked on the version read, deletes carry the uid and version read as
// preconditions, so a member object that changed or was replaced since is never overwritten
// or deleted. A delete of what is gone already succeeds.
func (s *Syncer) send(ctx context.Context, c federation.ClusterClient, w memberWrite) (*unstructured.Unstructured, error) {
	switch w.action {
	case plan.ActionCreate:
		if w.gated {
			return s.opts.Gate.Create(ctx, c, w.gate)
		}
		return c.Create(ctx, w.gvr, w.desired)
	case plan.ActionUpdate, plan.ActionOrphan:
		obj := w.desired
		if obj.GetResourceVersion() == "" && w.live != nil {
			// The retention table keeps resourceVersion; a custom one might not. Updates are
			// always locked on the version read.
			obj = obj.DeepCopy()
			obj.SetResourceVersion(w.live.GetResourceVersion())
		}
		if w.gated {
			return s.opts.Gate.Update(ctx, c, w.gate, obj)
		}
		return c.Update(ctx, w.gvr, obj)
	case plan.ActionDelete:
		uid, rv := w.live.GetUID(), w.live.GetResourceVersion()
		// Preconditions: never delete an object that was replaced, or changed (perhaps
		// unlabelled by its owner) since it was read. A member object's propagation policy
		// is always set: a kind's own default may orphan (batch/v1 Jobs orphan their Pods).
		if !w.gated {
			return nil, fmt.Errorf("sync: delete of %s %s without the gate's evidence", w.gvr.Resource, w.live.GetName())
		}
		err := s.opts.Gate.Delete(ctx, c, w.gate, metav1.DeleteOptions{
			Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
			PropagationPolicy: w.propagation,
		})
		if apierrors.IsNotFound(err) {
			return nil, nil // gone already
		}
		return nil, err
	}
	return nil, fmt.Errorf("sync: unknown action %q", w.action)
}

// succeeded records a successful write in the Syncer's memory.
func (s *Syncer) succeeded(in plan.Input, d plan.Decision, ch plan.Change, stored *unstructured.Unstructured) {
	key := keyOfFed(in.Object)
	switch ch.Action {
	case plan.ActionCreate, plan.ActionUpdate:
		v, ok := plan.Verified{}, false
		if stored != nil {
			// What the server did not keep of the render, it never will: not drift.
			v, ok = plan.Verified{ResourceVersion: stored.GetResourceVersion(), Input: d.Keys[ch.Cluster], Dropped: plan.Dropped(ch.Desired, stored, s.fields)}, true
		}
		s.wrote(key, ch.Cluster, v, ok)
	default:
		s.wrote(key, ch.Cluster, plan.Verified{}, true)
	}
}

func keyOfFed(fed *federation.FederatedObject) federation.Key {
	return federation.Key{Namespace: fed.Namespace, Name: fed.Name}
}
