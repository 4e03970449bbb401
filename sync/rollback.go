package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/jsonvalue"
	"github.com/fedkit/fedkit/sync/plan"
)

// ErrRevisionNotFound is returned by [Rollback] when the history has no such revision; the
// message lists the revisions it has.
var ErrRevisionNotFound = errors.New("sync: revision not found")

// ErrGenerated is returned by [Rollback] when the federated object is generated from a
// native object (federation.GeneratedByLabel) and the revision differs in what its
// generator decides (overrides, placement): the message names the policy to edit instead.
var ErrGenerated = errors.New("sync: generated object")

// rollbackRetries bounds Rollback's re-reads after a Conflict.
const rollbackRetries = 3

// Rollback restores what ran in a revision of the federated object key, from its revision
// history: the template, overrides and retainReplicas; revision 0 means the revision before
// the current one. Where the object goes and how many replicas run stay as they are: the
// placement, and the replica count in the template. To restore the revision's placement
// too, pass [RestorePlacement].
//
// The object is updated on the host like any edit, so it becomes a new revision (the old
// snapshot's ControllerRevision is renumbered when the result is that snapshot) and sync
// propagates it as usual: Rollback itself touches no member cluster. The history is the
// object's ControllerRevisions in its namespace, or for a cluster-scoped federated object in
// the Syncer's Options.HistoryNamespace (pass [HistoryNamespace] when it is not the default).
//
// A missing revision is an error wrapping [ErrRevisionNotFound] that lists the revisions
// there are.
//
// A federated object generated from a native host object (federation.GeneratedByLabel: a
// propagation policy's, or the dependencies loop's) is rewritten from that object on every
// change, so rolling it back would not last. Rollback restores the revision's template into
// the native object instead (federation.WithTemplate, the replica count kept), which the
// user owns and its generator follows. The overrides, retainReplicas and placement of such
// an object are its generator's (the policy's): a revision that differs in them, or
// RestorePlacement where the placement differs, is an error wrapping [ErrGenerated] that
// names the policy to edit, and nothing is written.
func Rollback(ctx context.Context, host federation.ClusterClient, typ federation.TypeConfig, key federation.Key, revision int64, opts ...RollbackOption) error {
	o := rollbackOptions{historyNamespace: DefaultHistoryNamespace}
	for _, opt := range opts {
		opt(&o)
	}
	return rollback(ctx, host, typ, key, revision, o)
}

// A RollbackOption is a choice of [Rollback] beyond its defaults.
type RollbackOption func(*rollbackOptions)

type rollbackOptions struct {
	historyNamespace string
	restorePlacement bool
}

// RestorePlacement makes [Rollback] restore the revision's spec.placement too: an explicit
// choice to put the object back where it was, taking it out of clusters added since and
// back into clusters excluded since.
func RestorePlacement() RollbackOption {
	return func(o *rollbackOptions) { o.restorePlacement = true }
}

// HistoryNamespace tells [Rollback] where the history of a cluster-scoped federated object
// is: the Syncer's Options.HistoryNamespace. An empty namespace keeps the default,
// DefaultHistoryNamespace. Namespaced objects keep their history in their own namespace.
func HistoryNamespace(namespace string) RollbackOption {
	return func(o *rollbackOptions) {
		if namespace != "" {
			o.historyNamespace = namespace
		}
	}
}

func rollback(ctx context.Context, host federation.ClusterClient, typ federation.TypeConfig, key federation.Key, revision int64, opts rollbackOptions) error {
	if revision < 0 {
		return fmt.Errorf("sync: rollback %s %s: revision %d: %w", typ.Federated.Kind, key, revision, ErrRevisionNotFound)
	}
	gvr := typ.FederatedGVR()
	for attempt := 0; ; attempt++ {
		u, err := host.Get(ctx, gvr, key.Namespace, key.Name)
		if err != nil {
			return fmt.Errorf("sync: rollback %s %s: %w", typ.Federated.Kind, key, err)
		}
		ns := u.GetNamespace()
		if ns == "" {
			ns = opts.historyNamespace
		}
		hist, err := listHistory(ctx, host, ns, u.GetUID())
		if err != nil {
			return fmt.Errorf("sync: rollback %s %s: %w", typ.Federated.Kind, key, err)
		}
		target, err := pick(hist, plan.RevisionOf(u), revision)
		if err != nil {
			return fmt.Errorf("sync: rollback %s %s: %w", typ.Federated.Kind, key, err)
		}
		var snap plan.Snapshot
		if err := json.Unmarshal(target.data, &snap); err != nil {
			return fmt.Errorf("sync: rollback %s %s: revision %d does not decode: %w", typ.Federated.Kind, key, target.revision, err)
		}
		if u.GetLabels()[federation.GeneratedByLabel] != "" {
			if err := rollbackNative(ctx, host, typ, u, snap, target.revision, opts.restorePlacement); err != nil {
				return fmt.Errorf("sync: rollback %s %s: %w", typ.Federated.Kind, key, err)
			}
			return nil
		}
		if err := plan.Restore(u, snap, opts.restorePlacement, typ.ReplicasFields()); err != nil {
			return fmt.Errorf("sync: rollback %s %s: %w", typ.Federated.Kind, key, err)
		}
		_, err = host.Update(ctx, gvr, u)
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= rollbackRetries {
			return fmt.Errorf("sync: rollback %s %s to revision %d: %w", typ.Federated.Kind, key, target.revision, err)
		}
	}
}

// pick finds the revision to restore: revision itself, or for 0 the newest one before
// current.
func pick(hist []historyEntry, current, revision int64) (historyEntry, error) {
	if current == 0 && len(hist) > 0 {
		current = hist[len(hist)-1].revision
	}
	var found *historyEntry
	for i := range hist {
		h := &hist[i]
		switch {
		case revision > 0 && h.revision == revision:
			found = h
		case revision == 0 && h.revision < current && (found == nil || h.revision > found.revision):
			found = h
		}
	}
	if found != nil {
		return *found, nil
	}
	have := make([]string, len(hist))
	for i, h := range hist {
		have[i] = fmt.Sprint(h.revision)
	}
	want := fmt.Sprintf("revision %d", revision)
	if revision == 0 {
		want = fmt.Sprintf("a revision before %d", current)
	}
	if len(have) == 0 {
		return historyEntry{}, fmt.Errorf("%w: %s: the history is empty", ErrRevisionNotFound, want)
	}
	return historyEntry{}, fmt.Errorf("%w: %s; the history has %s", ErrRevisionNotFound, want, strings.Join(have, ", "))
}

// rollbackNative restores snap's template into the native object fed was generated from
// (same namespace and name, typ's target), keeping its replica count. It refuses a
// revision whose other fields differ from fed's: those are the generator's.
func rollbackNative(ctx context.Context, host federation.ClusterClient, typ federation.TypeConfig, u *unstructured.Unstructured, snap plan.Snapshot, revision int64, placement bool) error {
	fed, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return err
	}
	owner := "the " + u.GetLabels()[federation.GeneratedByLabel] + " loop"
	if p := u.GetAnnotations()[federation.PolicyAnnotation]; p != "" {
		owner = "policy " + p
	}
	encode := func(v any) []byte { b, _ := json.Marshal(v); return b }
	var differ []string
	if !jsonvalue.EqualJSON(encode(snap.Overrides), encode(fed.Spec.Overrides)) {
		differ = append(differ, "overrides")
	}
	if snap.RetainReplicas != fed.Spec.RetainReplicas {
		differ = append(differ, "retainReplicas")
	}
	if placement && !jsonvalue.EqualJSON(encode(snap.Placement), encode(fed.Spec.Placement)) {
		differ = append(differ, "placement")
	}
	if len(differ) > 0 {
		return fmt.Errorf("%w: %s is generated from %s %s by %s, and revision %d has other %s: those are the policy's (edit it); a rollback restores the %s's own fields only",
			ErrGenerated, typ.Federated.Kind, typ.Target.Kind, u.GetName(), owner, revision, strings.Join(differ, ", "), typ.Target.Kind)
	}
	gvr := typ.TargetGVR()
	for attempt := 0; ; attempt++ {
		native, err := host.Get(ctx, gvr, u.GetNamespace(), u.GetName())
		if err != nil {
			return fmt.Errorf("%s is generated from %s %s by %s, which cannot be read: %w", typ.Federated.Kind, typ.Target.Kind, u.GetName(), owner, err)
		}
		template := plan.RestoredTemplate(snap.Template, federation.NativeTemplate(native), typ.ReplicasFields())
		_, err = host.Update(ctx, gvr, federation.WithTemplate(native, template))
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= rollbackRetries {
			return fmt.Errorf("restore revision %d into %s %s (the object %s generates it from): %w", revision, typ.Target.Kind, u.GetName(), owner, err)
		}
	}
}
