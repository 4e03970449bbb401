package dependencies

import (
	"context"
	"encoding/json"
	"errors"
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

// holds reports whether the loop's finalizer (federation.DependenciesFinalizer) belongs on f:
// its dependencies follow it (spec.propagateDependencies, in a namespace things may follow
// workloads from) and it is not being deleted. The finalizer makes its deletion seen: a
// workload deleted with federation.OrphanAnnotation leaves its copies running, and the
// dependencies they use are released in their clusters, not deleted, before it goes.
func (p *pass) holds(f *found) bool {
	return p.reserved == "" && f.obj.Spec.PropagateDependencies && f.obj.DeletionTimestamp == nil
}

// hold puts the finalizer on every workload of all that [pass.holds] and lacks it, before
// any of its dependencies follows it.
func (d *Dependencies) hold(ctx context.Context, p *pass, all []found) error {
	var errs []error
	for i := range all {
		f := &all[i]
		if p.holds(f) && !slices.Contains(f.u.GetFinalizers(), federation.DependenciesFinalizer) {
			errs = append(errs, d.setFinalizer(ctx, p, f, true))
		}
	}
	return errors.Join(errs...)
}

// letGo removes the finalizer from every workload of all that has it and [pass.holds] no
// more: one being deleted, one that stopped propagating its dependencies, one in a namespace
// nothing follows workloads from. A workload being orphaned goes only when followed says the
// pass recorded what it releases (its dependencies' federation.ReleaseClustersAnnotation).
func (d *Dependencies) letGo(ctx context.Context, p *pass, all []found, followed bool) error {
	var errs []error
	for i := range all {
		f := &all[i]
		if p.holds(f) || !slices.Contains(f.u.GetFinalizers(), federation.DependenciesFinalizer) {
			continue
		}
		if orphaning(f.obj) && !followed && p.reserved == "" {
			continue // what its copies use is not recorded yet: keep it, and the pass fails
		}
		err := d.setFinalizer(ctx, p, f, false)
		// A workload being deleted that the loop let go may be gone: its condition is not
		// written any more.
		f.letGo = err == nil && f.obj.DeletionTimestamp != nil
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// orphaning reports whether obj is being deleted with federation.OrphanAnnotation: sync
// orphans its member copies.
func orphaning(obj *federation.FederatedObject) bool {
	return obj.DeletionTimestamp != nil && obj.Annotations[federation.OrphanAnnotation] == "true"
}

// setFinalizer adds (add) or removes the loop's finalizer on f's workload with a merge patch
// of its finalizers, locked on the resourceVersion read, so another's finalizer added
// meanwhile is never lost. After a Conflict it reads the workload again from the host and,
// while the change is still due (a workload being deleted takes no new finalizer), patches
// that version, at most finalizerRetries times.
func (d *Dependencies) setFinalizer(ctx context.Context, p *pass, f *found, add bool) error {
	gvr := f.w.typ.FederatedGVR()
	u := f.u
	for attempt := 0; ; attempt++ {
		fins := slices.DeleteFunc(slices.Clone(u.GetFinalizers()), func(s string) bool { return s == federation.DependenciesFinalizer })
		if add {
			fins = append(fins, federation.DependenciesFinalizer)
		}
		if slices.Equal(fins, u.GetFinalizers()) || (add && u.GetDeletionTimestamp() != nil) {
			return nil
		}
		out, err := patchFinalizers(ctx, d.host, gvr, u, fins)
		if err == nil {
			p.wrote = true
			if attempt == 0 {
				// The host holds what the pass read but for the finalizers: the condition's
				// status write goes on from there, not into a Conflict.
				next := f.u.DeepCopy()
				next.SetResourceVersion(out.GetResourceVersion())
				next.SetFinalizers(out.GetFinalizers())
				f.u = next
			}
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= finalizerRetries {
			return fmt.Errorf("dependencies: finalizer of %s %s/%s: %w", f.w.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
		}
		if u, err = d.host.Get(ctx, gvr, u.GetNamespace(), u.GetName()); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("dependencies: finalizer of %s %s/%s: %w", f.w.typ.Federated.Kind, f.u.GetNamespace(), f.u.GetName(), err)
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
