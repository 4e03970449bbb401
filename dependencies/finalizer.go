package dependencies

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// finalizerRetries bounds how often a pass reads a workload again after a Conflict on its
// finalizer (another loop wrote it since the read, as the scheduler, sync and the collector
// do all the time).
const finalizerRetries = 3

// setFinalizer adds (add) or removes the loop's finalizer on f's workload with a merge patch
// of its finalizers, locked on the resourceVersion read, so another's finalizer added
// meanwhile is never lost. After a Conflict it reads the workload again from the host and,
// while the change is still due (a workload being deleted takes no new finalizer), patches
// that version, at most finalizerRetries times.
func (d *Dependencies) setFinalizer(ctx context.Context, f *workloadObject, add bool) (wrote bool, err error) {
	gvr := f.typ.FederatedGVR()
	u := f.u
	for attempt := 0; ; attempt++ {
		fins := slices.DeleteFunc(slices.Clone(u.GetFinalizers()), func(s string) bool { return s == federation.DependenciesFinalizer })
		if add {
			fins = append(fins, federation.DependenciesFinalizer)
		}
		if slices.Equal(fins, u.GetFinalizers()) || (add && u.GetDeletionTimestamp() != nil) {
			return false, nil
		}
		out, err := patchFinalizers(ctx, d.host, gvr, u, fins)
		if err == nil {
			if attempt == 0 {
				// The host holds what the pass read but for the finalizers: the condition's
				// status write goes on from there, not into a Conflict.
				next := f.u.DeepCopy()
				next.SetResourceVersion(out.GetResourceVersion())
				next.SetFinalizers(out.GetFinalizers())
				f.u = next
			}
			return true, nil
		}
		if !apierrors.IsConflict(err) || attempt >= finalizerRetries {
			return false, fmt.Errorf("dependencies: finalizer of %s %s/%s: %w", f.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
		}
		if u, err = d.host.Get(ctx, gvr, u.GetNamespace(), u.GetName()); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("dependencies: finalizer of %s %s/%s: %w", f.typ.Federated.Kind, f.u.GetNamespace(), f.u.GetName(), err)
		}
	}
}

// patchFinalizers merge-patches u's finalizers to fins, carrying u's resourceVersion so that a
// concurrent change is a Conflict, never lost, and returns the host's answer.
func patchFinalizers(ctx context.Context, c federation.ClusterClient, gvr schema.GroupVersionResource, u *unstructured.Unstructured, fins []string) (*unstructured.Unstructured, error) {
	var list any = fins
	if len(fins) == 0 {
		list = nil // a merge patch removes the field
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": u.GetResourceVersion(), "finalizers": list}})
	if err != nil {
		return nil, err
	}
	return c.Patch(ctx, gvr, u.GetNamespace(), u.GetName(), types.MergePatchType, data)
}
