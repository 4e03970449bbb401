package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/fedkit/fedkit/federation"
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

// snapshot is what a revision records: the parts of the spec that define the member objects.
type snapshot struct {
	Template       map[string]any               `json:"template,omitempty"`
	Overrides      []federation.ClusterOverride `json:"overrides,omitempty"`
	Placement      federation.Placement         `json:"placement"`
	RetainReplicas bool                         `json:"retainReplicas,omitempty"`
}

func snapshotOf(fed *federation.FederatedObject) ([]byte, error) {
	// encoding/json sorts map keys, so equal specs give equal bytes.
	return json.Marshal(snapshot{
		Template:       fed.Spec.Template.Object,
		Overrides:      fed.Spec.Overrides,
		Placement:      fed.Spec.Placement,
		RetainReplicas: fed.Spec.RetainReplicas,
	})
}

// revisionName is the ControllerRevision's name: the object's name (cut to leave room) and a
// hash of the snapshot, as the apps controllers name theirs.
func revisionName(name string, data []byte) string {
	h := fnv.New64a()
	_, _ = h.Write(data)
	suffix := strconv.FormatUint(h.Sum64(), 36)
	if max := 253 - 1 - len(suffix); len(name) > max {
		name = name[:max]
	}
	return name + "-" + suffix
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
	out := make([]historyEntry, 0, len(list.Items))
	for i := range list.Items {
		var cr appsv1.ControllerRevision
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &cr); err != nil {
			continue // not ours to judge; it cannot be a revision we wrote
		}
		if !ownedBy(cr.OwnerReferences, uid) {
			continue
		}
		out = append(out, historyEntry{obj: &list.Items[i], revision: cr.Revision, data: cr.Data.Raw})
	}
	slices.SortFunc(out, func(a, b historyEntry) int { return compareInt(a.revision, b.revision) })
	return out, nil
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
	// revision sync recorded, still on the object, needs no look at the history.
	if rev, ok := s.knownRevision(key, string(fed.UID), fed.Generation); ok && annotationRevision(u) == rev {
		return rev, nil
	}
	rev, err := s.recordRevision(ctx, r, u, fed)
	if err == nil {
		s.setKnownRevision(key, string(fed.UID), fed.Generation, rev)
	}
	return rev, err
}

// recordRevision finds or records the revision of fed's spec in the history.
func (s *Syncer) recordRevision(ctx context.Context, r federation.Reader, u *unstructured.Unstructured, fed *federation.FederatedObject) (int64, error) {
	data, err := snapshotOf(fed)
	if err != nil {
		return 0, fmt.Errorf("encode revision snapshot: %w", err)
	}
	hist, err := s.history(ctx, r, fed)
	if err != nil {
		return 0, err
	}
	latest := annotationRevision(u)
	for _, h := range hist {
		latest = max(latest, h.revision)
	}
	name := revisionName(fed.Name, data)
	current := int64(0)
	if i := slices.IndexFunc(hist, func(h historyEntry) bool { return h.obj.GetName() == name }); i >= 0 {
		h := hist[i]
		if !sameJSON(h.data, data) {
			return 0, fmt.Errorf("revision history: ControllerRevision %s holds another snapshot with the same hash", name)
		}
		current = h.revision
		if h.revision < latest {
			// An old snapshot came back: it becomes the newest revision.
			current = latest + 1
			if err := s.renumber(ctx, h.obj, current); err != nil {
				return 0, err
			}
			hist[i].revision = current
		}
	} else {
		stored, err := s.createRevision(ctx, fed, name, data, latest+1)
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
		if err == nil {
			var got appsv1.ControllerRevision
			cerr := runtime.DefaultUnstructuredConverter.FromUnstructured(stored.Object, &got)
			switch {
			case cerr == nil && s.leftBehind(&got, fed):
				// The history of an earlier object of this name, which the garbage collector
				// has not removed (yet, or ever: that object was deleted orphaning its
				// dependents): it is replaced.
				if err = s.deleteRevision(ctx, fed, &got); err == nil {
					stored, err = create()
				}
			case cerr != nil || !sameJSON(got.Data.Raw, data) || !ownedBy(got.OwnerReferences, fed.UID):
				return nil, fmt.Errorf("revision history: ControllerRevision %s/%s exists and is not this snapshot of %s", ns, name, fed.Name)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("record revision %d: %w", revision, err)
	}
	return stored, nil
}

// leftBehind reports whether rev is the history of an earlier federated object of fed's kind
// and name (one with another uid): that object is gone, since fed holds its name now.
func (s *Syncer) leftBehind(rev *appsv1.ControllerRevision, fed *federation.FederatedObject) bool {
	owner := metav1.GetControllerOfNoCopy(rev)
	return owner != nil && owner.UID != fed.UID && owner.Name == fed.Name &&
		owner.Kind == s.typ.Federated.Kind && owner.APIVersion == s.typ.Federated.GroupVersion().String() &&
		rev.Labels[OwnerUIDLabel] == string(owner.UID)
}

// deleteRevision deletes a ControllerRevision that leftBehind found, on the condition that it
// is still the one read.
func (s *Syncer) deleteRevision(ctx context.Context, fed *federation.FederatedObject, rev *appsv1.ControllerRevision) error {
	uid, rv := rev.UID, rev.ResourceVersion
	err := s.host.Delete(ctx, controllerRevisionGVR, rev.Namespace, rev.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ControllerRevision %s/%s left by an earlier %s %s: %w", rev.Namespace, rev.Name, s.typ.Federated.Kind, fed.Name, err)
	}
	return nil
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
		return fmt.Errorf("renumber ControllerRevision %s to revision %d: %w", obj.GetName(), revision, err)
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
		uid := h.obj.GetUID()
		err := s.host.Delete(ctx, controllerRevisionGVR, h.obj.GetNamespace(), h.obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("prune revision %d: %w", h.revision, err))
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

// annotationRevision reads federation.RevisionAnnotation (0 when absent or malformed).
func annotationRevision(u *unstructured.Unstructured) int64 {
	n, err := strconv.ParseInt(u.GetAnnotations()[federation.RevisionAnnotation], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func revisionOf(u *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(u.Object, "revision")
	return n
}

// sameJSON compares two JSON documents by value: a ControllerRevision's data comes back from
// the API server re-encoded, not byte for byte as written.
func sameJSON(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return equality.Semantic.DeepEqual(x, y)
}
