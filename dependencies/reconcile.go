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
	corev1 "k8s.io/api/core/v1"
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
	"github.com/fedkit/fedkit/placement"
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
	// ReasonDependencyRefused: a dependency holds credentials that never follow a workload
	// (federation.Credentials: a member's credentials, a service-account token, the
	// control plane's own Secrets); the message names it and why. Nothing is federated for
	// it.
	ReasonDependencyRefused = "DependencyRefused"
	// ReasonDependencyNotPlaceable: a dependency the user federated excludes, by its own
	// placement, a cluster the workload runs in (excludeClusters, clusterAffinity.required,
	// a taint it does not tolerate); the message names it and the cluster. An explicit
	// exclusion wins: it is not sent there.
	ReasonDependencyNotPlaceable = "DependencyNotPlaceable"
	// ReasonNamespaceRefused: the workload is in a system namespace (kube-system,
	// kube-public, kube-node-lease) or the control plane's own: nothing there follows a
	// workload, as no propagation policy selects there ([federation.ReservedNamespace]).
	// Nothing is federated for it.
	ReasonNamespaceRefused = "NamespaceRefused"
)

// Reconcile makes the dependencies of every workload with spec.propagateDependencies in
// key.Namespace (key.Name is ignored) follow their workloads, reading the host's API server.
// For each dependency, the union of the clusters whose pods refer to it ([WorkloadOf],
// [Union]):
//
//   - nobody federated it: a Federated<Kind> labelled federation.k8s.io/generated-by:
//     dependencies is created with the host object as template (server metadata and status
//     stripped), the union as spec.placement.clusters and a toleration of every taint; it is
//     updated when either changes, and deleted when no workload refers to it any more or its
//     workloads run nowhere (sync then removes the member copies). A generated
//     FederatedPersistentVolumeClaim is placed nowhere instead while the host claim exists
//     (sync releases its claims). Removing the label hands it over to the user.
//   - the user federated it: its spec is left alone; the union goes to its annotation
//     federation.k8s.io/required-by-clusters, which placement adds to its clusters but for
//     those its placement explicitly refuses: each workload that needs it there gets
//     DependenciesResolved=False, reason DependencyNotPlaceable, naming it and the cluster.
//     The annotation goes when no workload needs it.
//   - it is missing on the host and not optional: each workload referring to it gets
//     DependenciesResolved=False, reason DependencyMissing, a message naming Kind/name, and
//     a Warning event. It turns True when the dependency appears.
//   - it is a Secret that holds credentials (federation.Credentials): nothing is federated,
//     a user's FederatedSecret gets no annotation, and each workload referring to it gets
//     DependenciesResolved=False, reason DependencyRefused, naming it and why.
//
// A workload being deleted (deletionTimestamp set) keeps a dependency in the clusters the
// dependency is placed in (annotated with, for the user's) and adds none ([Dependency.Where]).
// Every workload with spec.propagateDependencies carries federation.DependenciesFinalizer
// while it is not being deleted. One deleted with federation.OrphanAnnotation keeps its
// copies running: its clusters join each dependency's federation.ReleaseClustersAnnotation
// ([Dependency.Releases]), where sync releases the copies instead of deleting them, before
// the pass removes the finalizer. A generated dependency that lists such clusters stays,
// placed nowhere, while its host object exists.
//
// Nothing of a workload in a system namespace or the control plane's own
// ([federation.ReservedNamespace]) follows it: DependenciesResolved=False, reason
// NamespaceRefused.
//
// A template (or a cluster's render of it) whose pod template does not decode sets
// DependenciesResolved=False, reason InvalidTemplate, naming the field and the cluster; the
// other workloads are unaffected.
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
	// invalid is the extractor's error, when the template (or a cluster's render of it)
	// cannot be read.
	invalid error
	// refs is what its pods refer to anywhere; wl, what the union is given.
	refs []Reference
	wl   Workload
	// letGo: it is being deleted and the pass removed the loop's finalizer (it may be gone).
	letGo bool
}

func (d *Dependencies) reconcile(ctx context.Context, r federation.Reader, ns string) (federation.Result, string, error) {
	p := newPass(r, ns)
	p.reserved = federation.ReservedNamespace(ns, d.opts.ControlPlaneNamespace)
	all, workloads, err := d.read(ctx, p)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	d.seen(ns, len(workloads) > 0)

	var errs []error
	deps := Union(workloads)
	// Every workload whose dependencies follow it is held by the loop's finalizer first, so
	// that its deletion is seen: what an orphaned workload's pods use must be released,
	// not deleted.
	held := d.hold(ctx, p, all)
	if held != nil {
		errs = append(errs, held)
	}
	followed := held == nil && p.reserved == ""
	if followed {
		if err := d.follow(ctx, p, deps); err != nil {
			errs = append(errs, err)
			followed = false
		}
	}
	if err := d.letGo(ctx, p, all, followed); err != nil {
		errs = append(errs, err)
	}
	if slices.ContainsFunc(deps, func(dep Dependency) bool { return dep.Kind == KindSecret }) && (p.requeue == 0 || p.requeue > SecretRecheck) {
		// No watch tells of a Secret's change (see Run): look again.
		p.requeue = SecretRecheck
	}
	for i := range all {
		if all[i].letGo {
			continue
		}
		changed, err := d.setCondition(ctx, &all[i], p)
		p.wrote = p.wrote || changed
		if err != nil {
			errs = append(errs, err)
		}
	}
	outcome := fedmetrics.OutcomeUnchanged
	if p.wrote {
		outcome = fedmetrics.OutcomeWritten
	}
	if err := errors.Join(errs...); err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	return federation.Result{RequeueAfter: p.requeue}, outcome, nil
}

// read lists the workloads of p's namespace: every federated object of the workload types
// (for their conditions), and, for those with spec.propagateDependencies, what the union
// needs of them.
func (d *Dependencies) read(ctx context.Context, p *pass) ([]found, []Workload, error) {
	log := logr.FromContextOrDiscard(ctx)
	var all []found
	var workloads []Workload
	for _, w := range d.workloads {
		gvr := w.typ.FederatedGVR()
		list, err := p.r.List(ctx, gvr, p.ns, metav1.ListOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("dependencies: list %s in %s: %w", w.typ.Federated.Kind, p.ns, err)
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
			if obj.Spec.PropagateDependencies && p.reserved == "" {
				if err := d.references(ctx, p, &f); err != nil {
					return nil, nil, err
				}
				if f.invalid == nil {
					workloads = append(workloads, f.wl)
				}
			}
			all = append(all, f)
		}
	}
	return all, workloads, nil
}

// references fills f's Workload ([WorkloadOf]; the Clusters are listed only for a workload
// with overrides) and refs. A template or render that cannot be read is f.invalid, naming the
// object, the field and the cluster. The error is the Clusters' List.
func (d *Dependencies) references(ctx context.Context, p *pass, f *found) error {
	var fleet []federation.Cluster
	if len(f.obj.Spec.Overrides) > 0 {
		var err error
		if fleet, err = p.fleet(ctx, d); err != nil {
			return err
		}
	}
	wl, err := WorkloadOf(f.w.typ, f.w.extract, f.obj, fleet)
	if err != nil {
		f.invalid = err
		return nil
	}
	f.wl, f.refs = wl, wl.Referenced()
	return nil
}

// follow creates, updates and deletes the generated federated objects and the
// required-by-clusters annotations of the user's, for the dependencies deps of p's namespace.
// What it learns of them (missing, refused, excluded somewhere) it records in p.
func (d *Dependencies) follow(ctx context.Context, p *pass, deps []Dependency) error {
	var errs []error
	for _, kind := range []string{KindConfigMap, KindPersistentVolumeClaim, KindSecret, KindServiceAccount} {
		typ := d.kinds[kind]
		list, err := p.r.List(ctx, typ.FederatedGVR(), p.ns, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("dependencies: list %s in %s: %w", typ.Federated.Kind, p.ns, err))
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
			want, err := d.followOne(ctx, p, typ, dep, existing[dep.Name])
			wanted[dep.Name] = want
			if err != nil {
				errs = append(errs, err)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(existing)) {
			if wanted[name] {
				continue
			}
			if err := d.retire(ctx, p, typ, kind, existing[name]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// followOne makes dependency dep follow its workloads, given cur, its federated object (nil
// when there is none). It reports whether cur is still wanted: false makes [retire] deal with
// it.
func (d *Dependencies) followOne(ctx context.Context, p *pass, typ federation.TypeConfig, dep Dependency, cur *unstructured.Unstructured) (bool, error) {
	if cur != nil && !generated(cur) {
		return true, d.followUsers(ctx, p, typ, dep, cur)
	}
	native, err := p.r.Get(ctx, d.nativeGVR(dep.Kind), p.ns, dep.Name)
	switch {
	case apierrors.IsNotFound(err):
		if !dep.Optional {
			p.missing[dep.String()] = true
		}
		return false, nil
	case err != nil:
		return true, fmt.Errorf("dependencies: get %s %s/%s: %w", dep.Kind, p.ns, dep.Name, err)
	}
	if why := d.credentials(dep.Kind, native); why != "" {
		p.refuse(dep, why)
		return false, nil
	}
	placed := placedIn(cur)
	clusters := dep.Where(placed)
	if len(clusters) == 0 {
		return false, nil
	}
	desired := generate(typ, native, clusters)
	switch {
	case cur == nil:
		if _, err := d.host.Create(ctx, typ.FederatedGVR(), desired); err != nil {
			return true, fmt.Errorf("dependencies: create %s %s/%s: %w", typ.Federated.Kind, p.ns, dep.Name, err)
		}
		p.wrote = true
	case cur.GetDeletionTimestamp() != nil:
		// The last one is still going (sync removes its member copies first): make it again
		// once it is gone.
		p.later(requeueGone)
	default:
		return true, d.updateGenerated(ctx, p, typ, cur, desired, dep.Releases(federation.ReleaseClusters(cur.GetAnnotations()), placed))
	}
	return true, nil
}

// updateGenerated gives cur, a federated object the loop generated, desired's spec and the
// clusters where its copies are released when it leaves them
// (federation.ReleaseClustersAnnotation), in one update when either changed: the release of
// a cluster is written no later than the placement that leaves it.
func (d *Dependencies) updateGenerated(ctx context.Context, p *pass, typ federation.TypeConfig, cur, desired *unstructured.Unstructured, release []string) error {
	next, annotated := withAnnotation(cur, federation.ReleaseClustersAnnotation, federation.FormatReleaseClusters(release))
	respec := !apiequality.Semantic.DeepEqual(cur.Object["spec"], desired.Object["spec"])
	switch {
	case !annotated && !respec:
		return nil
	case !annotated:
		next = cur.DeepCopy()
	}
	if respec {
		next.Object["spec"] = desired.Object["spec"]
	}
	if _, err := d.host.Update(ctx, typ.FederatedGVR(), next); err != nil {
		return fmt.Errorf("dependencies: update %s %s/%s: %w", typ.Federated.Kind, cur.GetNamespace(), cur.GetName(), err)
	}
	p.wrote = true
	return nil
}

// followUsers makes a dependency the user federated (cur) follow its workloads: its spec is
// the user's, the required-by-clusters annotation says where the workloads need it, and
// placement adds those clusters but for the ones its placement explicitly refuses, which p
// records. A Secret that holds credentials gets no annotation: it never follows a workload.
func (d *Dependencies) followUsers(ctx context.Context, p *pass, typ federation.TypeConfig, dep Dependency, cur *unstructured.Unstructured) error {
	was := federation.RequiredClusters(cur.GetAnnotations())
	required := dep.Where(was)
	release := dep.Releases(federation.ReleaseClusters(cur.GetAnnotations()), was)
	if why := d.credentials(dep.Kind, templateOf(cur)); why != "" {
		p.refuse(dep, why)
		required = nil
	}
	if len(required) > 0 {
		refused, err := d.refusedBy(ctx, p, cur, required)
		if err != nil {
			return err
		}
		if len(refused) > 0 {
			p.excluded[dep.String()] = refused
		}
	}
	changed, err := d.annotate(ctx, typ, cur, required, release)
	p.wrote = p.wrote || changed
	return err
}

// refusedBy returns the clusters of required that the placement of cur, a dependency the
// user federated, explicitly refuses ([placement.Refused]), as the scheduler and sync will
// find. An object that does not decode refuses nothing here: the scheduler reports it.
func (d *Dependencies) refusedBy(ctx context.Context, p *pass, cur *unstructured.Unstructured, required []string) (map[string]placement.Diagnosis, error) {
	obj, err := federation.FederatedObjectFromUnstructured(cur)
	if err != nil {
		return nil, nil
	}
	fleet, err := p.fleet(ctx, d)
	if err != nil {
		return nil, err
	}
	running := make([]string, 0, len(obj.Status.Clusters))
	for _, c := range obj.Status.Clusters {
		running = append(running, c.Name)
	}
	return placement.Refused(placement.Input{Placement: obj.Spec.Placement, Clusters: fleet, Running: running, Now: d.opts.Clock.Now()}, required), nil
}

// retire deals with cur, a federated dependency no workload needs any more (or none can have:
// it is missing, or refused). The user's loses its required-by-clusters annotation. A
// generated one is deleted, and sync removes its member copies; but one whose host object
// exists is kept, placed nowhere, when it is a FederatedPersistentVolumeClaim or lists
// clusters to release its copies in (federation.ReleaseClustersAnnotation: orphaned
// workloads there use them): sync releases those copies rather than delete them (a claim's
// data, an orphaned pod's ConfigMap, are never collateral of a move), and takes them back if
// a workload needs them there again. It goes when the host object does.
func (d *Dependencies) retire(ctx context.Context, p *pass, typ federation.TypeConfig, kind string, cur *unstructured.Unstructured) error {
	release := federation.ReleaseClusters(cur.GetAnnotations())
	if !generated(cur) {
		changed, err := d.annotate(ctx, typ, cur, nil, release)
		p.wrote = p.wrote || changed
		return err
	}
	if cur.GetDeletionTimestamp() != nil {
		return nil
	}
	gvr, ns, name := typ.FederatedGVR(), cur.GetNamespace(), cur.GetName()
	if kind == KindPersistentVolumeClaim || len(release) > 0 {
		native, err := p.r.Get(ctx, d.nativeGVR(kind), ns, name)
		switch {
		case err == nil:
			return d.updateGenerated(ctx, p, typ, cur, generate(typ, native, nil), release)
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("dependencies: get %s %s/%s: %w", kind, ns, name, err)
		}
	}
	if err := d.host.Delete(ctx, gvr, ns, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("dependencies: delete %s %s/%s: %w", typ.Federated.Kind, ns, name, err)
	}
	p.wrote = true
	return nil
}

// credentials says why the dependency obj of kind must never follow a workload
// ([federation.Credentials]: a member's credentials, a service-account token, the control
// plane's own Secrets), or "". Only Secrets are refused.
func (d *Dependencies) credentials(kind string, obj *unstructured.Unstructured) string {
	if kind != KindSecret {
		return ""
	}
	return federation.Credentials(obj, d.opts.ControlPlaneNamespace)
}

// templateOf is the member object the federated object u's template describes, as far as
// [federation.Credentials] reads it: its labels and type, in u's namespace.
func templateOf(u *unstructured.Unstructured) *unstructured.Unstructured {
	t, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	out := &unstructured.Unstructured{Object: map[string]any{}}
	if typ, ok := t["type"]; ok {
		out.Object["type"] = typ
	}
	if l, _, _ := unstructured.NestedStringMap(t, "metadata", "labels"); len(l) > 0 {
		out.SetLabels(l)
	}
	out.SetNamespace(u.GetNamespace())
	return out
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

// annotate sets (or, for no clusters, removes) the required-by-clusters and release-clusters
// annotations of a federated object the user made, in one update.
func (d *Dependencies) annotate(ctx context.Context, typ federation.TypeConfig, u *unstructured.Unstructured, required, release []string) (bool, error) {
	next, changed := withAnnotation(u, federation.RequiredByClustersAnnotation, federation.FormatRequiredClusters(required))
	next, released := withAnnotation(next, federation.ReleaseClustersAnnotation, federation.FormatReleaseClusters(release))
	if !changed && !released {
		return false, nil
	}
	if _, err := d.host.Update(ctx, typ.FederatedGVR(), next); err != nil {
		return false, fmt.Errorf("dependencies: annotate %s %s/%s: %w", typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return true, nil
}

// withAnnotation returns a copy of u whose annotation key is value ("" removes it), and true;
// or u itself, and false, when it has that already.
func withAnnotation(u *unstructured.Unstructured, key, value string) (*unstructured.Unstructured, bool) {
	if u.GetAnnotations()[key] == value {
		return u, false
	}
	next := u.DeepCopy()
	ann := maps.Clone(u.GetAnnotations())
	if ann == nil {
		ann = map[string]string{}
	}
	if value == "" {
		delete(ann, key)
	} else {
		ann[key] = value
	}
	next.SetAnnotations(ann)
	return next, true
}

// generate is the federated object the loop owns for native, placed in clusters. Nobody gave
// it a placement of its own, so it follows its workloads wherever they run: it tolerates
// every taint (a workload that tolerates a tainted cluster, or is still being evicted from a
// drained one, has its dependency there). An untolerated taint would be an exclusion nobody
// asked for.
func generate(typ federation.TypeConfig, native *unstructured.Unstructured, clusters []string) *unstructured.Unstructured {
	refs := make([]any, 0, len(clusters))
	for _, c := range clusters {
		refs = append(refs, map[string]any{"name": c})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"template": federation.NativeTemplate(native),
			"placement": map[string]any{
				"clusters":    refs,
				"tolerations": []any{map[string]any{"operator": string(corev1.TolerationOpExists)}},
			},
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
// read or a dependency is missing, refused or excluded where f runs ([pass.problems]: the
// first decides the reason, the message says them all), True otherwise; removed from a
// workload that no longer propagates its dependencies. An event marks a change of status or
// reason.
func (d *Dependencies) setCondition(ctx context.Context, f *found, p *pass) (bool, error) {
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
	switch problems := p.problems(f); {
	case len(problems) > 0:
		msgs := make([]string, len(problems))
		for i, pr := range problems {
			msgs[i] = pr.message
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, problems[0].reason, strings.Join(msgs, "; ")
	case len(f.refs) == 0:
		cond.Message = "the template refers to no ConfigMap, Secret, ServiceAccount or PersistentVolumeClaim"
	default:
		cond.Message = "following the workload: " + strings.Join(f.named(Reference.String), ", ")
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
