package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/internal/jsonvalue"
	"github.com/fedkit/fedkit/sync/plan"
)

// Revisions. Every change of a federated object's template, overrides or placement gets the
// next revision number. The history lives on the host as apps/v1 ControllerRevisions owned by
// the federated object (the garbage collector removes them with it), one per distinct
// snapshot, exactly as Deployments and StatefulSets keep theirs: a snapshot that comes back
// (a rollback, or an edit undone by hand) reuses its ControllerRevision, renumbered to the
// next revision, so revision numbers only grow.

// ControllerRevisionGVR is the resource of the revision history.
var controllerRevisionGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}

// OwnerUIDLabel on a ControllerRevision names the federated object whose history it is. It
// selects one object's history exactly, whatever the length of its name.
const OwnerUIDLabel = "federation.k8s.io/owner-uid"

// revisionNameOf is the name of fed's ControllerRevision for the snapshot data.
func (s *Syncer) revisionNameOf(fed *federation.FederatedObject, data []byte) string {
	return plan.RevisionName(s.typ.Federated.GroupKind(), fed.Name, data)
}

// historyEntry is one ControllerRevision of an object's history.
type historyEntry struct {
	obj      *unstructured.Unstructured
	revision int64
	data     []byte
}

// history lists the ControllerRevisions of fed, oldest revision first.
func (s *Syncer) history(ctx context.Context, r federation.Reader, fed *federation.FederatedObject) ([]historyEntry, error) {
	return listHistory(ctx, r, s.historyNamespace(fed), fed.UID)
}

func listHistory(ctx context.Context, r federation.Reader, namespace string, uid types.UID) ([]historyEntry, error) {
	list, err := r.List(ctx, controllerRevisionGVR, namespace, metav1.ListOptions{LabelSelector: OwnerUIDLabel + "=" + string(uid)})
	if err != nil {
		return nil, fmt.Errorf("list revision history: %w", err)
	}
	return historyEntries(list.Items, uid), nil
}

// RevisionHistory decodes the revision history sync keeps of the federated object whose uid is
// owner, from the ControllerRevisions of its history namespace (its own namespace, or
// Options.HistoryNamespace for a cluster-scoped object), given in any order: the revisions
// owned by it whose snapshot decodes, oldest first. It is pure. It is what the Syncer gives
// plan.Input.History while a staged rollout is under way, so a caller of plan.Decide outside
// the Syncer (a dry run, a test harness) decides as the Syncer does.
func RevisionHistory(revisions []unstructured.Unstructured, owner types.UID) []plan.Revision {
	return revisionsOf(historyEntries(revisions, owner))
}

// historyEntries decodes the ControllerRevisions of items that uid owns, oldest revision
// first.
func historyEntries(items []unstructured.Unstructured, uid types.UID) []historyEntry {
	out := make([]historyEntry, 0, len(items))
	for i := range items {
		var cr appsv1.ControllerRevision
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &cr); err != nil {
			continue // not ours to judge; it cannot be a revision we wrote
		}
		if !ownedBy(cr.OwnerReferences, uid) {
			continue
		}
		out = append(out, historyEntry{obj: &items[i], revision: cr.Revision, data: cr.Data.Raw})
	}
	slices.SortFunc(out, func(a, b historyEntry) int { return compareInt(a.revision, b.revision) })
	return out
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// historyNamespace is where fed's revisions live: its own namespace, or
// Options.HistoryNamespace for a cluster-scoped federated object.
func (s *Syncer) historyNamespace(fed *federation.FederatedObject) string {
	if fed.Namespace != "" {
		return fed.Namespace
	}
	return s.opts.HistoryNamespace
}

// ensureRevision returns the revision number of fed's current spec, recording it in the
// history when it is new (or renumbering the entry when an old snapshot came back), pruning the
// history to spec.revisionHistoryLimit, and writing federation.RevisionAnnotation on the
// federated object. r serves the history reads (a cache in Run); writes go to the host.
func (s *Syncer) ensureRevision(ctx context.Context, r federation.Reader, u *unstructured.Unstructured, fed *federation.FederatedObject) (int64, error) {
	key := keyOfFed(fed)
	// The spec of a custom resource changes only with its generation: a generation whose
	// revision sync recorded, still on the object, needs no look at the history, unless Run
	// saw a ControllerRevision of the object deleted since (see historyDeleted).
	known, ok := s.knownRevision(key, string(fed.UID), fed.Generation)
	check, epoch := s.historyCheck(key)
	if ok && plan.RevisionOf(u) == known && !check {
		return known, nil
	}
	if !ok {
		known = 0
	}
	rev, err := s.recordRevision(ctx, r, u, fed, known)
	if err == nil {
		s.setKnownRevision(key, string(fed.UID), fed.Generation, rev)
		s.historyChecked(key, epoch)
	}
	return rev, err
}

// historyDeleted is Run's handler of a deleted ControllerRevision of the type: the next pass
// over its owner reads the history again, so a current revision deleted by hand is recorded
// again at once rather than after a restart or a new spec.
func (s *Syncer) historyDeleted(obj *unstructured.Unstructured) {
	if key, ok := s.revisionOwner(obj); ok {
		s.markHistoryStale(key)
	}
}

// recordRevision finds or records the revision of fed's spec in the history. known is the
// revision sync recorded for fed's generation earlier (0 when it does not know): when that
// ControllerRevision is gone (deleted by hand) and no later one exists, the spec is recorded
// again under that number, since it did not change.
func (s *Syncer) recordRevision(ctx context.Context, r federation.Reader, u *unstructured.Unstructured, fed *federation.FederatedObject, known int64) (int64, error) {
	data, err := plan.SnapshotOf(fed)
	if err != nil {
		return 0, fmt.Errorf("encode revision snapshot: %w", err)
	}
	hist, err := s.history(ctx, r, fed)
	if err != nil {
		return 0, err
	}
	latest := plan.RevisionOf(u)
	for _, h := range hist {
		latest = max(latest, h.revision)
	}
	name := s.revisionNameOf(fed, data)
	i := slices.IndexFunc(hist, func(h historyEntry) bool { return h.obj.GetName() == name })
	if i < 0 {
		// History an earlier version recorded, named by the snapshot alone.
		legacy := plan.LegacyRevisionName(fed.Name, data)
		i = slices.IndexFunc(hist, func(h historyEntry) bool { return h.obj.GetName() == legacy })
	}
	current := int64(0)
	switch {
	case i >= 0 && !jsonvalue.EqualJSON(hist[i].data, data):
		return 0, fmt.Errorf("revision history: ControllerRevision %s holds another snapshot with the same hash", hist[i].obj.GetName())
	case i >= 0 && hist[i].obj.GetName() != name:
		// The current spec lives under its name, which status.rollout records: the entry of
		// the old name is recorded again under the new one (renumbered, when it came back)
		// and deleted.
		current = hist[i].revision
		if current < latest {
			current = latest + 1
		}
		stored, err := s.createRevision(ctx, fed, name, data, current)
		if err != nil {
			return 0, err
		}
		if err := s.deleteEntry(ctx, fed, hist[i], "replaced by "+name); err != nil {
			return 0, err
		}
		hist[i] = historyEntry{obj: stored, revision: current, data: data}
	case i >= 0:
		h := hist[i]
		current = h.revision
		if h.revision < latest {
			// An old snapshot came back: it becomes the newest revision.
			current = latest + 1
			if err := s.renumber(ctx, h.obj, current); err != nil {
				return 0, err
			}
			hist[i].revision = current
		}
	default:
		next := latest + 1
		if known > 0 && known == latest && !slices.ContainsFunc(hist, func(h historyEntry) bool { return h.revision == known }) {
			next = known // this generation's ControllerRevision was deleted: recorded again
		}
		stored, err := s.createRevision(ctx, fed, name, data, next)
		if err != nil {
			return 0, err
		}
		hist = append(hist, historyEntry{obj: stored, revision: revisionOf(stored), data: data})
		current = revisionOf(stored)
	}
	if err := s.prune(ctx, fed, hist, current); err != nil {
		return 0, err
	}
	return current, nil
}

// historyWriteError is a write of the revision history that failed: write names it (the
// verb, ControllerRevision and its namespace/name, and what it was for), err is the host's
// error. A host that refuses it (see refusedWrite) stops the pass with Propagated=False.
type historyWriteError struct {
	write string
	err   error
}

func (e *historyWriteError) Error() string { return e.write + ": " + e.err.Error() }
func (e *historyWriteError) Unwrap() error { return e.err }

// refusedWrite reports whether err is the host refusing a write rather than failing it: RBAC,
// a quota or an admission webhook said no, and only a change on the host can help.
func refusedWrite(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsInvalid(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsMethodNotSupported(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsUnsupportedMediaType(err)
}

// historyRefused records a history write the host refused in the Propagated condition (and a
// Warning event) and returns cause, for the pass to be retried with backoff: the refusal is
// lifted on the host (a Role, a quota, a webhook's policy), not by a change of the object.
// Other failures are only returned.
func (s *Syncer) historyRefused(ctx context.Context, u *unstructured.Unstructured, cause error) *end {
	var hw *historyWriteError
	if !errors.As(cause, &hw) || !refusedWrite(hw.err) {
		return failure(cause)
	}
	msg := fmt.Sprintf("revision history: %s; nothing is propagated until the host accepts it", hw.Error())
	rep := plan.Stopped(plan.ReasonHistoryWriteFailed, msg, u.GetGeneration())
	s.record(u, rep.Events, false)
	if _, err := s.writeStatus(ctx, u, rep.Status); err != nil {
		return failure(errors.Join(cause, err))
	}
	return failure(cause)
}

// createRevision stores a new ControllerRevision. When one of that name exists already (the
// cache had not seen it yet), the stored one is used if it holds the same snapshot.
func (s *Syncer) createRevision(ctx context.Context, fed *federation.FederatedObject, name string, data []byte, revision int64) (*unstructured.Unstructured, error) {
	ns := s.historyNamespace(fed)
	m, err := s.revisionObject(fed, ns, name, data, revision)
	if err != nil {
		return nil, err
	}
	create := func() (*unstructured.Unstructured, error) {
		return s.hostWrite(keyOfFed(fed), func() (*unstructured.Unstructured, error) {
			return s.host.Create(ctx, controllerRevisionGVR, &unstructured.Unstructured{Object: m})
		})
	}
	stored, err := create()
	if apierrors.IsAlreadyExists(err) {
		stored, err = s.host.Get(ctx, controllerRevisionGVR, ns, name)
		if err != nil {
			return nil, fmt.Errorf("record revision %d: get ControllerRevision %s/%s: %w", revision, ns, name, err)
		}
		var got appsv1.ControllerRevision
		cerr := runtime.DefaultUnstructuredConverter.FromUnstructured(stored.Object, &got)
		switch {
		case cerr == nil && s.leftBehind(&got, fed):
			// The history of an earlier object of this name, which the garbage collector
			// has not removed (yet, or ever: that object was deleted orphaning its
			// dependents, and the collector only took the ownerReferences): it is replaced.
			if err = s.deleteRevision(ctx, fed, &got); err == nil {
				stored, err = create()
			}
		case cerr != nil || !jsonvalue.EqualJSON(got.Data.Raw, data) || !ownedBy(got.OwnerReferences, fed.UID):
			return nil, fmt.Errorf("revision history: ControllerRevision %s/%s exists and is not this snapshot of %s", ns, name, fed.Name)
		}
	}
	var hw *historyWriteError
	if err != nil && !errors.As(err, &hw) {
		err = &historyWriteError{write: fmt.Sprintf("create ControllerRevision %s/%s (revision %d)", ns, name, revision), err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("record revision %d: %w", revision, err)
	}
	return stored, nil
}

// leftBehind reports whether rev is the history of an earlier federated object of fed's kind
// and name (one with another uid): that object is gone, since fed holds its name now. It is
// recognised by its owner, or, when the garbage collector took the ownerReferences of an
// owner deleted orphaning its dependents, by its OwnerUIDLabel alone (rev has fed's name for
// fed's snapshot, and its name hashes the kind).
func (s *Syncer) leftBehind(rev *appsv1.ControllerRevision, fed *federation.FederatedObject) bool {
	uid := rev.Labels[OwnerUIDLabel]
	if uid == "" || uid == string(fed.UID) {
		return false
	}
	if len(rev.OwnerReferences) == 0 {
		return true // orphaned
	}
	owner := metav1.GetControllerOfNoCopy(rev)
	return owner != nil && string(owner.UID) == uid && owner.Name == fed.Name &&
		owner.Kind == s.typ.Federated.Kind && owner.APIVersion == s.typ.Federated.GroupVersion().String()
}

// deleteRevision deletes a ControllerRevision that leftBehind found, on the condition that it
// is still the one read.
func (s *Syncer) deleteRevision(ctx context.Context, fed *federation.FederatedObject, rev *appsv1.ControllerRevision) error {
	uid, rv := rev.UID, rev.ResourceVersion
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rev)
	if err != nil {
		return err
	}
	// The evidence: the label leftBehind found naming the earlier object, gone.
	err = s.deleteHistory(ctx, &unstructured.Unstructured{Object: obj}, rev.Labels[OwnerUIDLabel], metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return &historyWriteError{write: fmt.Sprintf("delete ControllerRevision %s/%s (left by an earlier %s %s)", rev.Namespace, rev.Name, s.typ.Federated.Kind, fed.Name), err: err}
	}
	return nil
}

// deleteEntry deletes a ControllerRevision of the object's own history, on the condition that
// it is still the one read; why says what for.
func (s *Syncer) deleteEntry(ctx context.Context, fed *federation.FederatedObject, h historyEntry, why string) error {
	uid := h.obj.GetUID()
	err := s.deleteHistory(ctx, h.obj, string(fed.UID), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return &historyWriteError{write: fmt.Sprintf("delete ControllerRevision %s/%s (revision %d, %s)", h.obj.GetNamespace(), h.obj.GetName(), h.revision, why), err: err}
	}
	return nil
}

// deleteHistory deletes rev, a ControllerRevision of the history of the federated object of
// uid owner (its OwnerUIDLabel), through the gate.
func (s *Syncer) deleteHistory(ctx context.Context, rev *unstructured.Unstructured, owner string, opts metav1.DeleteOptions) error {
	return s.opts.Gate.Delete(ctx, s.host, gate.Write{
		Verb: gate.Delete, Resource: controllerRevisionGVR, Object: rev,
		Evidence: gate.Evidence{Mark: gate.Mark{Label: OwnerUIDLabel, Value: owner}},
	}, opts)
}

// revisionObject is the ControllerRevision of fed's snapshot data, as the map the API machinery
// makes of an appsv1.ControllerRevision, built without its reflection: one is created for
// every new spec.
func (s *Syncer) revisionObject(fed *federation.FederatedObject, ns, name string, data []byte, revision int64) (map[string]any, error) {
	var content any
	if err := utiljson.Unmarshal(data, &content); err != nil {
		return nil, fmt.Errorf("encode ControllerRevision %s: %w", name, err)
	}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "ControllerRevision",
		"metadata": map[string]any{
			"name":      name,
			"namespace": ns,
			"labels":    map[string]any{OwnerUIDLabel: string(fed.UID)},
			"ownerReferences": []any{map[string]any{
				"apiVersion":         s.typ.Federated.GroupVersion().String(),
				"kind":               s.typ.Federated.Kind,
				"name":               fed.Name,
				"uid":                string(fed.UID),
				"controller":         true,
				"blockOwnerDeletion": true,
			}},
		},
		"data":     content,
		"revision": revision,
	}, nil
}

// renumber gives an existing ControllerRevision a new revision number (data is immutable,
// the number is not).
func (s *Syncer) renumber(ctx context.Context, obj *unstructured.Unstructured, revision int64) error {
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"revision":%d}`, obj.GetResourceVersion(), revision)
	if _, err := s.host.Patch(ctx, controllerRevisionGVR, obj.GetNamespace(), obj.GetName(), types.MergePatchType, []byte(patch)); err != nil {
		return &historyWriteError{write: fmt.Sprintf("update ControllerRevision %s/%s (renumber revision %d to %d)", obj.GetNamespace(), obj.GetName(), revisionOf(obj), revision), err: err}
	}
	return nil
}

// prune deletes the oldest revisions beyond spec.revisionHistoryLimit; the current one always
// stays, and so does, for an object with spec.rollout, the revision a staged rollout may
// keep clusters on (see keptForRollout).
func (s *Syncer) prune(ctx context.Context, fed *federation.FederatedObject, hist []historyEntry, current int64) error {
	limit := int(federation.DefaultRevisionHistoryLimit)
	if l := fed.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	limit = max(limit, 1) // the current revision is always kept
	slices.SortFunc(hist, func(a, b historyEntry) int { return compareInt(a.revision, b.revision) })
	var errs []error
	for i := 0; len(hist)-i > limit; i++ {
		h := hist[i]
		if h.revision == current || keptForRollout(fed, h) {
			continue
		}
		if err := s.deleteEntry(ctx, fed, h, "pruned beyond spec.revisionHistoryLimit"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// keptForRollout reports whether h is the stable revision of fed's staged rollout
// (status.rollout), or status.syncedRevision when no rollout was recorded yet: the snapshot
// that clusters outside the started stages are rendered from, which pruning must not take.
func keptForRollout(fed *federation.FederatedObject, h historyEntry) bool {
	if fed.Spec.Rollout == nil {
		return false
	}
	if st := fed.Status.Rollout; st != nil {
		return h.obj.GetName() == st.StableRevisionName
	}
	return h.revision == fed.Status.SyncedRevision
}

func revisionOf(u *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(u.Object, "revision")
	return n
}
