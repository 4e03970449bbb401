package dependencies

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Reasons of the DependenciesResolved condition, and of the events.
const (
	// ReasonResolved: every dependency exists on the host (or is federated) and follows.
	ReasonResolved = "DependenciesResolved"
	// ReasonDependencyMissing: a dependency that is not optional is not on the host; the
	// message names it. The workload still propagates; the dependency follows once it
	// exists.
	ReasonDependencyMissing = "DependencyMissing"
	// ReasonInvalidTemplate: the template's pod template cannot be read; the message names
	// the field.
	ReasonInvalidTemplate = "InvalidTemplate"
)

// Reconcile makes the dependencies of every workload with spec.propagateDependencies in
// key.Namespace (key.Name is ignored) follow their workloads, reading the host's API server.
// For each dependency, the union of its workloads' clusters ([Union], [Clusters]):
//
//   - nobody federated it: a Federated<Kind> labelled federation.k8s.io/generated-by:
//     dependencies is created with the host object as template (server metadata and status
//     stripped) and the union as spec.placement.clusters; it is updated when either changes,
//     and deleted when no workload refers to it any more or its workloads run nowhere (sync
//     then removes the member copies). Removing the label hands it over to the user.
//   - the user federated it: its spec is left alone; the union goes to its annotation
//     federation.k8s.io/required-by-clusters, which placement adds to its clusters. The
//     annotation goes when no workload needs it.
//   - it is missing on the host and not optional: each workload referring to it gets
//     DependenciesResolved=False, reason DependencyMissing, a message naming Kind/name, and
//     a Warning event. It turns True when the dependency appears.
//
// A workload being deleted (deletionTimestamp set) keeps a dependency in the clusters the
// dependency is placed in (annotated with, for the user's) and adds none ([Dependency.Where]).
//
// A template whose pod template does not decode sets DependenciesResolved=False, reason
// InvalidTemplate, naming the field; the other workloads are unaffected.
func (d *Dependencies) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return d.reconcileFrom(ctx, d.host, key)
}

func (d *Dependencies) reconcileFrom(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, error) {
	key = federation.Key{Namespace: key.Namespace}
	p := loop.Pass{Loop: fedmetrics.LoopDependencies, KeyName: "namespace", Clock: d.opts.Clock, Logger: d.opts.Logger, Observe: d.reconciles.Observe}
	return p.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) {
		return d.reconcile(ctx, r, key.Namespace)
	})
}

// SecretRecheck is how often a namespace whose workloads depend on Secrets is looked at
// again: the loop does not watch the host's Secrets (its role may only get them, never list
// them), so a Secret's edit, or a missing Secret's creation, reaches its federated copy
// within this period.
const SecretRecheck = time.Minute

// requeueGone is how soon a pass looks again at a generated object that is still being
// deleted while a workload needs it anew.
const requeueGone = 5 * time.Second

// found is one workload read in a pass.
type found struct {
	w   workload
	u   *unstructured.Unstructured
	obj *federation.FederatedObject
	// invalid is the extractor's error, when the template cannot be read.
	invalid error
	refs    []Reference
}

func (d *Dependencies) reconcile(ctx context.Context, r federation.Reader, ns string) (federation.Result, string, error) {
	log := logr.FromContextOrDiscard(ctx)
	var all []found
	var workloads []Workload
	for _, w := range d.workloads {
		gvr := w.typ.FederatedGVR()
		list, err := r.List(ctx, gvr, ns, metav1.ListOptions{})
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("dependencies: list %s in %s: %w", w.typ.Federated.Kind, ns, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			if d.opts.StatusWriter != nil {
				u = d.opts.StatusWriter.Pending(gvr, u)
			}
			obj, err := federation.FederatedObjectFromUnstructured(u)
			if err != nil {
				// The scheduler and sync report an object that does not decode.
				log.V(1).Info("skipping a federated object that does not decode", "kind", w.typ.Federated.Kind, "name", u.GetName(), "error", err.Error())
				continue
			}
			f := found{w: w, u: u, obj: obj}
			if obj.Spec.PropagateDependencies {
				refs, err := w.extract(obj.Spec.Template.Object)
				if err != nil {
					f.invalid = fmt.Errorf("%s %s/%s: %w", w.typ.Federated.Kind, ns, u.GetName(), err)
				} else {
					f.refs = refs
					workloads = append(workloads, Workload{Kind: w.typ.Federated.Kind, Name: u.GetName(), Clusters: Clusters(obj), References: refs, Deleting: u.GetDeletionTimestamp() != nil})
				}
			}
			all = append(all, f)
		}
	}

	wrote := false
	var errs []error
	deps := Union(workloads)
	missing, requeue, changed, err := d.follow(ctx, r, ns, deps)
	wrote = wrote || changed
	if slices.ContainsFunc(deps, func(dep Dependency) bool { return dep.Kind == KindSecret }) && (requeue == 0 || requeue > SecretRecheck) {
		// No watch tells of a Secret's change (see Run): look again.
		requeue = SecretRecheck
	}
	if err != nil {
		errs = append(errs, err)
	}
	for i := range all {
		changed, err := d.setCondition(ctx, &all[i], missing)
		wrote = wrote || changed
		if err != nil {
			errs = append(errs, err)
		}
	}
	outcome := fedmetrics.OutcomeUnchanged
	if wrote {
		outcome = fedmetrics.OutcomeWritten
	}
	if err := errors.Join(errs...); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	return federation.Result{RequeueAfter: requeue}, outcome, nil
}

// follow creates, updates and deletes the generated federated objects and the
// required-by-clusters annotations of the user's, for the dependencies deps of namespace ns.
// It returns the dependencies that are missing, by Kind/name.
func (d *Dependencies) follow(ctx context.Context, r federation.Reader, ns string, deps []Dependency) (missing map[string]bool, requeue time.Duration, wrote bool, err error) {
	missing = map[string]bool{}
	var errs []error
	for _, kind := range []string{KindConfigMap, KindPersistentVolumeClaim, KindSecret, KindServiceAccount} {
		typ := d.kinds[kind]
		gvr := typ.FederatedGVR()
		list, lerr := r.List(ctx, gvr, ns, metav1.ListOptions{})
		if lerr != nil {
			errs = append(errs, fmt.Errorf("dependencies: list %s in %s: %w", typ.Federated.Kind, ns, lerr))
			continue
		}
		existing := map[string]*unstructured.Unstructured{}
		for i := range list.Items {
			existing[list.Items[i].GetName()] = &list.Items[i]
		}
		wanted := map[string]bool{}
		for _, dep := range deps {
			if dep.Kind != kind {
				continue
			}
			wanted[dep.Name] = true
			cur := existing[dep.Name]
			if cur != nil && !generated(cur) {
				changed, werr := d.annotate(ctx, typ, cur, dep.Where(federation.RequiredClusters(cur.GetAnnotations())))
				wrote = wrote || changed
				if werr != nil {
					errs = append(errs, werr)
				}
				continue
			}
			native, gerr := r.Get(ctx, d.nativeGVR(kind), ns, dep.Name)
			switch {
			case apierrors.IsNotFound(gerr):
				native = nil
			case gerr != nil:
				errs = append(errs, fmt.Errorf("dependencies: get %s %s/%s: %w", kind, ns, dep.Name, gerr))
				continue
			}
			if native == nil && !dep.Optional {
				missing[dep.String()] = true
			}
			clusters := dep.Where(placedIn(cur))
			if native == nil || len(clusters) == 0 {
				wanted[dep.Name] = false
				continue
			}
			desired := generate(typ, native, clusters)
			switch {
			case cur == nil:
				if _, cerr := d.host.Create(ctx, gvr, desired); cerr != nil {
					errs = append(errs, fmt.Errorf("dependencies: create %s %s/%s: %w", typ.Federated.Kind, ns, dep.Name, cerr))
					continue
				}
				wrote = true
			case cur.GetDeletionTimestamp() != nil:
				// The last one is still going (sync removes its member copies first): make
				// it again once it is gone.
				requeue = requeueGone
			case !apiequality.Semantic.DeepEqual(cur.Object["spec"], desired.Object["spec"]):
				next := cur.DeepCopy()
				next.Object["spec"] = desired.Object["spec"]
				if _, uerr := d.host.Update(ctx, gvr, next); uerr != nil {
					errs = append(errs, fmt.Errorf("dependencies: update %s %s/%s: %w", typ.Federated.Kind, ns, dep.Name, uerr))
					continue
				}
				wrote = true
			}
		}
		for _, name := range slices.Sorted(maps.Keys(existing)) {
			cur := existing[name]
			if wanted[name] {
				continue
			}
			if !generated(cur) {
				changed, werr := d.annotate(ctx, typ, cur, nil)
				wrote = wrote || changed
				if werr != nil {
					errs = append(errs, werr)
				}
				continue
			}
			if cur.GetDeletionTimestamp() != nil {
				continue
			}
			if derr := d.host.Delete(ctx, gvr, ns, name, metav1.DeleteOptions{}); derr != nil && !apierrors.IsNotFound(derr) {
				errs = append(errs, fmt.Errorf("dependencies: delete %s %s/%s: %w", typ.Federated.Kind, ns, name, derr))
				continue
			}
			wrote = true
		}
	}
	return missing, requeue, wrote, errors.Join(errs...)
}

// placedIn returns the clusters the generated object u places its dependency in; none when
// there is no u or it is being deleted (what a workload being deleted holds goes with it).
func placedIn(u *unstructured.Unstructured) []string {
	if u == nil || u.GetDeletionTimestamp() != nil {
		return nil
	}
	refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "placement", "clusters")
	var out []string
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			if name, ok := m["name"].(string); ok && name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// generated reports whether the dependencies loop owns u.
func generated(u *unstructured.Unstructured) bool {
	return u.GetLabels()[federation.GeneratedByLabel] == federation.GeneratedByDependencies
}

// annotate sets (or, for no clusters, removes) the required-by-clusters annotation of a
// federated object the user made.
func (d *Dependencies) annotate(ctx context.Context, typ federation.TypeConfig, u *unstructured.Unstructured, clusters []string) (bool, error) {
	want := federation.FormatRequiredClusters(clusters)
	ann := u.GetAnnotations()
	if ann[federation.RequiredByClustersAnnotation] == want {
		return false, nil
	}
	next := u.DeepCopy()
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]string{}
	}
	if want == "" {
		delete(ann, federation.RequiredByClustersAnnotation)
	} else {
		ann[federation.RequiredByClustersAnnotation] = want
	}
	next.SetAnnotations(ann)
	if _, err := d.host.Update(ctx, typ.FederatedGVR(), next); err != nil {
		return false, fmt.Errorf("dependencies: annotate %s %s/%s: %w", typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return true, nil
}

// generate is the federated object the loop owns for native, placed in clusters.
func generate(typ federation.TypeConfig, native *unstructured.Unstructured, clusters []string) *unstructured.Unstructured {
	refs := make([]any, 0, len(clusters))
	for _, c := range clusters {
		refs = append(refs, map[string]any{"name": c})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"template":  federation.NativeTemplate(native),
			"placement": map[string]any{"clusters": refs},
		},
	}}
	u.SetAPIVersion(typ.Federated.GroupVersion().String())
	u.SetKind(typ.Federated.Kind)
	u.SetNamespace(native.GetNamespace())
	u.SetName(native.GetName())
	u.SetLabels(map[string]string{federation.GeneratedByLabel: federation.GeneratedByDependencies})
	return u
}

// setCondition writes f's DependenciesResolved condition: False when its template cannot be
// read or a dependency is missing, True otherwise; removed from a workload that no longer
// propagates its dependencies. An event marks a change of status or reason.
func (d *Dependencies) setCondition(ctx context.Context, f *found, missing map[string]bool) (bool, error) {
	var prev *metav1.Condition
	if c := meta.FindStatusCondition(f.obj.Status.Conditions, federation.ConditionDependenciesResolved); c != nil {
		prev = c.DeepCopy()
	}
	if !f.obj.Spec.PropagateDependencies {
		if prev == nil {
			return false, nil
		}
		return d.writeStatus(ctx, f, func(conds []metav1.Condition) ([]metav1.Condition, bool) {
			out := slices.Clone(conds)
			return out, meta.RemoveStatusCondition(&out, federation.ConditionDependenciesResolved)
		})
	}
	cond := metav1.Condition{Type: federation.ConditionDependenciesResolved, Status: metav1.ConditionTrue, Reason: ReasonResolved, ObservedGeneration: f.obj.Generation}
	var names []string
	for _, r := range f.refs {
		if missing[r.String()] {
			names = append(names, r.String())
		}
	}
	switch {
	case f.invalid != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonInvalidTemplate, f.invalid.Error()
	case len(names) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonDependencyMissing
		cond.Message = fmt.Sprintf("not found in namespace %s: %s; the workload propagates without it, and it follows once it exists", f.u.GetNamespace(), strings.Join(names, ", "))
	case len(f.refs) == 0:
		cond.Message = "the template refers to no ConfigMap, Secret, ServiceAccount or PersistentVolumeClaim"
	default:
		refs := make([]string, len(f.refs))
		for i, r := range f.refs {
			refs[i] = r.String()
		}
		cond.Message = "following the workload: " + strings.Join(refs, ", ")
	}
	cond.Message = fedcond.Truncate(cond.Message, fedcond.MaxMessage)
	now := d.opts.Clock.Now()
	changed, err := d.writeStatus(ctx, f, func(conds []metav1.Condition) ([]metav1.Condition, bool) {
		return fedcond.Set(conds, cond, now)
	})
	if err != nil || !changed {
		return changed, err
	}
	switch {
	case cond.Status == metav1.ConditionFalse && (prev == nil || prev.Status != cond.Status || prev.Reason != cond.Reason):
		d.event(ctx, f.u, federation.EventTypeWarning, cond.Reason, cond.Message)
	case cond.Status == metav1.ConditionTrue && prev != nil && prev.Status == metav1.ConditionFalse:
		d.event(ctx, f.u, federation.EventTypeNormal, cond.Reason, cond.Message)
	}
	return true, nil
}

// writeStatus applies set to the workload's status.conditions and writes the status when it
// changed, through Options.StatusWriter when there is one; every other field is kept.
func (d *Dependencies) writeStatus(ctx context.Context, f *found, set func([]metav1.Condition) ([]metav1.Condition, bool)) (bool, error) {
	mutate := func(status map[string]any) (bool, error) {
		var old struct {
			Conditions []metav1.Condition `json:"conditions,omitempty"`
		}
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(status, &old)
		conds, changed := set(old.Conditions)
		if !changed {
			return false, nil
		}
		list := make([]any, 0, len(conds))
		for i := range conds {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
			if err != nil {
				return false, err
			}
			list = append(list, m)
		}
		if len(list) == 0 {
			delete(status, "conditions")
		} else {
			status["conditions"] = list
		}
		return true, nil
	}
	old, _ := f.u.Object["status"].(map[string]any)
	status := runtime.DeepCopyJSON(old)
	if status == nil {
		status = map[string]any{}
	}
	changed, err := mutate(status)
	if err != nil || !changed {
		return false, err
	}
	gvr := f.w.typ.FederatedGVR()
	what := fmt.Sprintf("%s %s/%s", f.w.typ.Federated.Kind, f.u.GetNamespace(), f.u.GetName())
	if w := d.opts.StatusWriter; w != nil {
		if err := w.WriteStatus(fedmetrics.LoopDependencies, gvr, f.u, func(s map[string]any) error { _, err := mutate(s); return err }); err != nil {
			return false, fmt.Errorf("dependencies: status of %s: %w", what, err)
		}
		return true, nil
	}
	out := &unstructured.Unstructured{Object: maps.Clone(f.u.Object)}
	out.Object["status"] = status
	if _, err := d.host.UpdateStatus(ctx, gvr, out); err != nil {
		return false, fmt.Errorf("dependencies: write status of %s: %w", what, err)
	}
	return true, nil
}

// event records an event on obj through Options.Events and logs it.
func (d *Dependencies) event(ctx context.Context, obj runtime.Object, typ, reason, msg string) {
	log := logr.FromContextOrDiscard(ctx)
	if typ != federation.EventTypeWarning {
		log = log.V(1)
	}
	log.Info(msg, "reason", reason)
	if d.opts.Events != nil {
		d.opts.Events.Eventf(obj, typ, reason, "%s", msg)
	}
}
