package dependencies

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
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

// reconcile is one pass over namespace ns: read, [Decide] (reading what it asks for), act,
// report.
func (d *Dependencies) reconcile(ctx context.Context, r federation.Reader, ns string) (federation.Result, string, error) {
	in, all, err := d.read(ctx, r, ns)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	dec, err := d.decide(ctx, r, &in)
	if err != nil {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	d.seen(ns, len(dec.Workloads) > 0)
	for _, k := range dec.Kept {
		logr.FromContextOrDiscard(ctx).Info("Keeping a dependency where it is: kinds this loop does not run over required it, and their workloads may still use it",
			"kind", k.Type.Federated.Kind, "name", k.Name, "requiredBy", k.Kinds)
	}
	wrote, err := d.act(ctx, in.Now, dec, all)
	outcome := fedmetrics.OutcomeUnchanged
	if wrote {
		outcome = fedmetrics.OutcomeWritten
	}
	switch {
	case gate.Refused(err):
		// A refusal is no error to retry with backoff: its event is recorded (write); the
		// pass comes back after gate.RecheckAfter, never in a hot loop.
		return federation.Result{RequeueAfter: gate.RecheckAfter}, fedmetrics.OutcomeError, nil
	case err != nil:
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	return federation.Result{RequeueAfter: dec.Requeue}, outcome, nil
}

// workloadObject is a workload as read: its type and the object as the host (or the status
// writer's pending change) has it.
type workloadObject struct {
	typ federation.TypeConfig
	u   *unstructured.Unstructured
}

// read lists what a pass over ns decides on: every federated object of the workload types
// (for their conditions; one that does not decode is the scheduler's and sync's to report),
// and the Federated<Kind> of each dependency kind.
func (d *Dependencies) read(ctx context.Context, r federation.Reader, ns string) (Input, []workloadObject, error) {
	log := logr.FromContextOrDiscard(ctx)
	in := Input{Namespace: ns, ControlPlaneNamespace: d.opts.ControlPlaneNamespace, Now: d.opts.Clock.Now(), Kinds: map[string]Federated{}}
	var all []workloadObject
	for _, w := range d.workloads {
		in.WorkloadKinds = append(in.WorkloadKinds, w.typ.Federated.Kind)
		gvr := w.typ.FederatedGVR()
		list, err := r.List(ctx, gvr, ns, metav1.ListOptions{})
		if err != nil {
			return Input{}, nil, fmt.Errorf("dependencies: list %s in %s: %w", w.typ.Federated.Kind, ns, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			if d.opts.StatusWriter != nil {
				u = d.opts.StatusWriter.Pending(gvr, u)
			}
			obj, err := federation.FederatedObjectFromUnstructured(u)
			if err != nil {
				log.V(1).Info("skipping a federated object that does not decode", "kind", w.typ.Federated.Kind, "name", u.GetName(), "error", err.Error())
				continue
			}
			in.Workloads = append(in.Workloads, WorkloadObject{Type: w.typ, Extract: w.extract, Object: obj})
			all = append(all, workloadObject{typ: w.typ, u: u})
		}
	}
	// In a fixed order: reads are requests, and a replay (the soak's, say) makes the same
	// ones in the same order.
	for _, kind := range slices.Sorted(maps.Keys(d.kinds)) {
		typ := d.kinds[kind]
		k := Federated{Type: typ}
		list, err := r.List(ctx, typ.FederatedGVR(), ns, metav1.ListOptions{})
		if err != nil {
			k.Err = err
		} else {
			for i := range list.Items {
				k.Objects = append(k.Objects, &list.Items[i])
			}
		}
		in.Kinds[kind] = k
	}
	return in, all, nil
}

// maxDecides bounds the calls of Decide in a pass: the Clusters for overrides, then the host
// objects (and the Clusters for the user's dependencies), then the decision.
const maxDecides = 4

// decide calls Decide, reads what it asks for into in, and calls it again, until it decides.
func (d *Dependencies) decide(ctx context.Context, r federation.Reader, in *Input) (Decision, error) {
	for range maxDecides {
		dec, err := Decide(*in)
		if err != nil || dec.Reads.Empty() {
			return dec, err
		}
		in.References = dec.References
		if dec.Reads.Fleet && !in.FleetRead {
			in.Fleet, in.FleetErr = d.clusters.List(ctx, r, logr.FromContextOrDiscard(ctx))
			in.FleetRead = true
		}
		for _, ref := range dec.Reads.Objects {
			d.readObject(ctx, r, in, ref)
		}
	}
	return Decision{}, fmt.Errorf("dependencies: namespace %s: Decide asked for reads %d times", in.Namespace, maxDecides)
}

// readObject gets the host object ref of in's namespace into in.Objects.
func (d *Dependencies) readObject(ctx context.Context, r federation.Reader, in *Input, ref Reference) {
	if in.Objects == nil {
		in.Objects = map[string]HostObject{}
	}
	u, err := r.Get(ctx, d.nativeGVR(ref.Kind), in.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		in.Objects[ref.String()] = HostObject{}
	case err != nil:
		in.Objects[ref.String()] = HostObject{Err: err}
	default:
		in.Objects[ref.String()] = HostObject{Object: u}
	}
}

// act carries dec out: the finalizer on the workloads of Hold first; the dependencies'
// writes once all of them hold; the finalizers of LetGo (an orphaning workload's only once
// every write succeeded); then the conditions, but for workloads being deleted that it let
// go. wrote reports a write sent.
func (d *Dependencies) act(ctx context.Context, now time.Time, dec Decision, all []workloadObject) (wrote bool, err error) {
	var o outcome
	var held error
	for _, i := range dec.Hold {
		held = errors.Join(held, o.add(d.setFinalizer(ctx, &all[i], true)))
	}
	o.errs = append(o.errs, dec.Errors...)
	followed := held == nil && len(dec.Errors) == 0
	if held == nil {
		for _, x := range dec.Writes {
			err := d.write(ctx, x)
			o.add(err == nil, err)
			followed = followed && err == nil
		}
	}
	letGo := map[int]bool{}
	for _, g := range dec.LetGo {
		if g.Orphaning && !followed {
			continue // what its copies use is not recorded yet: keep it, and the pass fails
		}
		err := o.add(d.setFinalizer(ctx, &all[g.Workload], false))
		// A workload being deleted that the loop let go may be gone: its condition is not
		// written any more.
		letGo[g.Workload] = err == nil && all[g.Workload].u.GetDeletionTimestamp() != nil
	}
	for _, c := range dec.Conditions {
		if !letGo[c.Workload] {
			o.add(d.setCondition(ctx, all[c.Workload], c, now))
		}
	}
	return o.wrote, errors.Join(o.errs...)
}

// outcome is what act's writes came to: whether one was sent, and their errors.
type outcome struct {
	wrote bool
	errs  []error
}

// add records one write's result and returns its error.
func (o *outcome) add(wrote bool, err error) error {
	o.wrote = o.wrote || wrote
	o.errs = append(o.errs, err)
	return err
}

// write sends one write of a federated dependency.
func (d *Dependencies) write(ctx context.Context, x Write) error {
	gvr, u := x.Type.FederatedGVR(), x.Object
	var err error
	switch x.Verb {
	case Create:
		_, err = d.host.Create(ctx, gvr, u)
	case Update:
		_, err = d.host.Update(ctx, gvr, u)
	case Delete:
		opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{}}
		if uid := u.GetUID(); uid != "" {
			opts.Preconditions.UID = &uid
		}
		if rv := u.GetResourceVersion(); rv != "" {
			opts.Preconditions.ResourceVersion = &rv
		}
		if err = d.opts.Gate.Delete(ctx, d.host, x.GateWrite(), opts); apierrors.IsNotFound(err) {
			err = nil
		}
	}
	if r := (*gate.Refusal)(nil); errors.As(err, &r) {
		d.event(ctx, u, federation.EventTypeWarning, gate.ReasonRefused, r.Error())
	}
	if err != nil {
		return fmt.Errorf("dependencies: %s %s %s/%s: %w", x.Verb, x.Type.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// setCondition writes c, a workload's DependenciesResolved change, and records its event.
func (d *Dependencies) setCondition(ctx context.Context, w workloadObject, c ConditionChange, now time.Time) (bool, error) {
	set := func(conds []metav1.Condition) ([]metav1.Condition, bool) {
		out := slices.Clone(conds)
		return out, meta.RemoveStatusCondition(&out, federation.ConditionDependenciesResolved)
	}
	if c.Condition != nil {
		set = func(conds []metav1.Condition) ([]metav1.Condition, bool) {
			return fedcond.Set(conds, *c.Condition, now)
		}
	}
	changed, err := d.writeStatus(ctx, w, set)
	if err != nil || !changed {
		return changed, err
	}
	if e := c.Event; e != nil {
		d.event(ctx, w.u, e.Type, e.Reason, e.Message)
	}
	return true, nil
}

// writeStatus applies set to the workload's status.conditions and writes the status when it
// changed, through Options.StatusWriter when there is one; every other field is kept.
func (d *Dependencies) writeStatus(ctx context.Context, f workloadObject, set func([]metav1.Condition) ([]metav1.Condition, bool)) (bool, error) {
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
	gvr := f.typ.FederatedGVR()
	what := fmt.Sprintf("%s %s/%s", f.typ.Federated.Kind, f.u.GetNamespace(), f.u.GetName())
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
