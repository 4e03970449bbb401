package agent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	gosync "sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
	"github.com/fedkit/fedkit/sync/plan"
)

// Agent runs in (or next to) a pull cluster: it applies the cluster's Assignments from the
// host to the member and reports back. Build it with New; drive it with Run, or call
// Reconcile from your own loop.
type Agent struct {
	hub, member federation.ClusterClient
	opts        Options
	ns          string

	schemasMu gosync.Mutex
	schemas   map[schema.GroupVersionKind]*plan.Schema

	mu gosync.Mutex
	// last holds the Assignments last read from the host: while the host cannot be read,
	// the member keeps what it was assigned, drift corrected.
	last []*federation.Assignment
}

// New returns the agent of the pull cluster opts.Cluster. hub reaches the host (with an
// identity confined to the cluster's namespace there), member the member's API server. It
// starts nothing.
func New(hub, member federation.ClusterClient, opts Options) (*Agent, error) {
	if hub == nil || member == nil {
		return nil, fmt.Errorf("agent: New: %w: hub and member are required", ErrInvalidOptions)
	}
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("agent: New: %w", err)
	}
	return &Agent{hub: hub, member: member, opts: opts, ns: federation.PullNamespace(opts.Cluster), schemas: map[schema.GroupVersionKind]*plan.Schema{}}, nil
}

// schema returns the schema drift is compared with for gvk, built once per kind.
func (a *Agent) schema(gvk schema.GroupVersionKind) *plan.Schema {
	a.schemasMu.Lock()
	defer a.schemasMu.Unlock()
	s, ok := a.schemas[gvk]
	if !ok {
		s = plan.SchemaFor(gvk)
		a.schemas[gvk] = s
	}
	return s
}

// Run reconciles every Options.Period on Options.Clock, and at once when an Assignment in
// the cluster's namespace changes (a watch on the host; while it cannot be opened, the
// period alone), until ctx is done, then returns nil. A failed pass is logged and retried.
func (a *Agent) Run(ctx context.Context) error {
	t := a.opts.Clock.NewTicker(a.opts.Period)
	defer t.Stop()
	changed := make(chan struct{}, 1)
	var wg gosync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { a.watch(ctx, changed) })
	for {
		if err := a.Reconcile(ctx); err != nil && ctx.Err() == nil {
			a.opts.Logger.Info("Agent pass failed; retrying", "cluster", a.opts.Cluster, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		case <-changed:
		}
	}
}

// watch signals changed (without blocking: changes in a burst make one pass) for every
// change of an Assignment in the cluster's namespace, opening the watch again when it ends,
// after Options.Period when it cannot be opened.
func (a *Agent) watch(ctx context.Context, changed chan<- struct{}) {
	for ctx.Err() == nil {
		w, err := a.hub.Watch(ctx, federation.AssignmentGVR, a.ns, metav1.ListOptions{})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-a.opts.Clock.After(a.opts.Period):
			}
			continue
		}
		for range w.ResultChan() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
		w.Stop()
	}
}

// Reconcile is one pass: it probes the member (its /readyz when the member client is a
// federation.HealthChecker, else a list of one Namespace), renews the agent's Lease on the
// host, reads the cluster's
// Assignments (the last ones read when the host cannot be reached), carries out each one
// in the member and writes its report. A failure in one Assignment never stops the others;
// the errors are returned together.
func (a *Agent) Reconcile(ctx context.Context) error {
	if err := a.probe(ctx); err != nil {
		// The Lease is not renewed: the host sees the cluster as it would see a push member
		// that does not answer. Nothing is read or reported: the reports stay as they were.
		return fmt.Errorf("agent: cluster %q: the member does not answer (the Lease is not renewed): %w", a.opts.Cluster, err)
	}
	var errs []error
	if err := a.renew(ctx); err != nil {
		errs = append(errs, err)
	}
	list, err := a.assignments(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, as := range list {
		st := a.apply(ctx, as)
		if err := a.report(ctx, as, st); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// probe asks the member whether it answers, as the cluster monitor asks a push member.
func (a *Agent) probe(ctx context.Context) error {
	if hc, ok := a.member.(federation.HealthChecker); ok {
		return hc.Healthy(ctx)
	}
	_, err := a.member.List(ctx, namespaceGVR, "", metav1.ListOptions{Limit: 1})
	return err
}

// assignments reads the cluster's Assignments from the host; when that fails, the ones
// read last, with the error.
func (a *Agent) assignments(ctx context.Context) ([]*federation.Assignment, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	list, err := a.hub.List(ctx, federation.AssignmentGVR, a.ns, metav1.ListOptions{})
	if err != nil {
		return a.last, fmt.Errorf("agent: cluster %q: list Assignments in %s on the host (keeping the %d read last): %w", a.opts.Cluster, a.ns, len(a.last), err)
	}
	out := make([]*federation.Assignment, 0, len(list.Items))
	for i := range list.Items {
		as, err := decodeAssignment(&list.Items[i])
		if err != nil {
			a.opts.Logger.Info("Skipping an Assignment that does not decode", "cluster", a.opts.Cluster, "error", err.Error())
			continue
		}
		out = append(out, as)
	}
	a.last = out
	return out, nil
}

// outcome is what came of one Assignment in the member: the decided change, the member
// object afterwards (nil: none) and the error of the read or write.
type outcome struct {
	ch  plan.Change
	obj *unstructured.Unstructured
	err error
}

// apply carries out one Assignment in the member, deciding with sync's own rules
// (plan.DecideApply, plan.DecideRemoval).
func (a *Agent) apply(ctx context.Context, as *federation.Assignment) outcome {
	gvr := as.Spec.Resource.GVR()
	desired := &unstructured.Unstructured{Object: as.Spec.Manifest.Object}
	if err := checkAssignment(as, gvr, desired); err != nil {
		return outcome{err: err}
	}
	live, err := a.member.Get(ctx, gvr, desired.GetNamespace(), desired.GetName())
	if apierrors.IsNotFound(err) {
		live, err = nil, nil
	}
	if err != nil {
		// What was reported last stays: the member object is not known to be gone.
		last := &unstructured.Unstructured{Object: as.Status.Object.Object}
		if last.Object == nil {
			last = nil
		}
		return outcome{obj: last, err: fmt.Errorf("read %s %s/%s: %w", gvr.Resource, desired.GetNamespace(), desired.GetName(), err)}
	}
	var ch plan.Change
	switch as.Spec.Change {
	case federation.AssignmentApply:
		ch = plan.DecideApply(a.opts.Cluster, a.opts.Identity, desired, live, plan.Verified{}, a.schema(desired.GroupVersionKind()))
	case federation.AssignmentDelete, federation.AssignmentOrphan:
		orphan := as.Spec.Change == federation.AssignmentOrphan
		ch = plan.DecideRemoval(a.opts.Cluster, a.opts.Identity, live, orphan)
		if orphan && ch.Action == plan.ActionOrphan {
			ch.Desired = withMetadataOf(live, desired)
		}
	default:
		return outcome{obj: live, err: fmt.Errorf("unknown change %q", as.Spec.Change)}
	}
	obj, err := a.carryOut(ctx, gvr, as, ch)
	return outcome{ch: ch, obj: obj, err: err}
}

// Reasons of an Assignment's Applied condition besides sync's own (plan.ReasonAlreadyExists,
// plan.ReasonManagedByOther, plan.ReasonWaitingForRemoval) and "Applied".
const (
	// ReasonFailed: the member refused the write, or could not be read.
	ReasonFailed = "Failed"
	// ReasonInvalidAssignment: see ErrInvalidAssignment.
	ReasonInvalidAssignment = "InvalidAssignment"
)

// ErrInvalidAssignment is wrapped by the error of an Assignment the agent refuses to act on:
// its manifest names no object, or another object than the Assignment's name says, or is
// of another group and version than spec.resource. It is reported (Applied False, reason
// InvalidAssignment), and nothing is written to the member.
var ErrInvalidAssignment = errors.New("agent: invalid Assignment")

// checkAssignment checks that as's manifest is the object its name and resource say.
func checkAssignment(as *federation.Assignment, gvr schema.GroupVersionResource, desired *unstructured.Unstructured) error {
	gv, err := schema.ParseGroupVersion(desired.GetAPIVersion())
	switch {
	case desired.GetName() == "" || desired.GetKind() == "":
		return fmt.Errorf("%w %s: its manifest has no name or kind", ErrInvalidAssignment, as.Name)
	case err != nil || gv != gvr.GroupVersion():
		return fmt.Errorf("%w %s: its manifest's apiVersion %q is not spec.resource's %s", ErrInvalidAssignment, as.Name, desired.GetAPIVersion(), gvr.GroupVersion())
	case as.Name != federation.AssignmentName(gvr, desired.GetNamespace(), desired.GetName()):
		return fmt.Errorf("%w %s: its manifest is %s %s/%s, whose Assignment is named %s", ErrInvalidAssignment, as.Name, gvr.Resource,
			desired.GetNamespace(), desired.GetName(), federation.AssignmentName(gvr, desired.GetNamespace(), desired.GetName()))
	}
	return nil
}

// carryOut writes ch to the member and returns the member object afterwards.
func (a *Agent) carryOut(ctx context.Context, gvr schema.GroupVersionResource, as *federation.Assignment, ch plan.Change) (*unstructured.Unstructured, error) {
	switch ch.Action {
	case plan.ActionCreate:
		return a.create(ctx, gvr, ch.Desired)
	case plan.ActionUpdate:
		obj, err := a.opts.Renderer.Retain(ch.Desired, ch.Live)
		if err != nil {
			return ch.Live, err
		}
		obj.SetResourceVersion(ch.Live.GetResourceVersion())
		return a.member.Update(ctx, gvr, obj)
	case plan.ActionOrphan:
		return a.member.Update(ctx, gvr, ch.Desired)
	case plan.ActionDelete:
		uid, rv := ch.Live.GetUID(), ch.Live.GetResourceVersion()
		err := a.member.Delete(ctx, gvr, ch.Live.GetNamespace(), ch.Live.GetName(), metav1.DeleteOptions{
			Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
			PropagationPolicy: as.Spec.PropagationPolicy,
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return ch.Live, err
		}
		obj, err := a.member.Get(ctx, gvr, ch.Live.GetNamespace(), ch.Live.GetName())
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return obj, err
	}
	return ch.Live, nil
}

// create creates desired in the member. When its namespace is missing, the agent creates
// it first as sync does in push mode (with the federation's identity and
// plan.CreatedNamespaceAnnotation) and tries once more.
func (a *Agent) create(ctx context.Context, gvr schema.GroupVersionResource, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj, err := a.member.Create(ctx, gvr, desired.DeepCopy())
	ns := desired.GetNamespace()
	if !plan.NamespaceMissing(err, ns) {
		return obj, err
	}
	identity := a.opts.Identity
	if identity == "" {
		identity = federation.ManagedByValue
	}
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
		"name":        ns,
		"labels":      map[string]any{federation.ManagedByLabel: identity},
		"annotations": map[string]any{plan.CreatedNamespaceAnnotation: "true"},
	}}}
	if _, err := a.member.Create(ctx, namespaceGVR, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return a.member.Create(ctx, gvr, desired.DeepCopy())
}

// namespaceGVR addresses core Namespaces.
var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// withMetadataOf is live with the labels and annotations of manifest: an orphaning as sync
// decided it (the federation's removed, a released copy marked).
func withMetadataOf(live, manifest *unstructured.Unstructured) *unstructured.Unstructured {
	out := live.DeepCopy()
	out.SetLabels(manifest.GetLabels())
	out.SetAnnotations(manifest.GetAnnotations())
	return out
}

// report writes o as as's status, when it changed.
func (a *Agent) report(ctx context.Context, as *federation.Assignment, o outcome) error {
	st := *as.Status.DeepCopy()
	st.ObservedGeneration = as.Generation
	st.Object = federation.RawObject{Object: reported(o.obj)}
	st.Conditions, _ = fedcond.Set(st.Conditions, applied(o), a.opts.Clock.Now())
	st.Metrics = a.metrics(ctx, as, o.obj)
	if reflect.DeepEqual(st, as.Status) {
		return nil
	}
	next := as.DeepCopy()
	next.Status = st
	u, err := federation.ToUnstructured(next)
	if err != nil {
		return err
	}
	if _, err := a.hub.UpdateStatus(ctx, federation.AssignmentGVR, u); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("agent: cluster %q: report Assignment %s: %w", a.opts.Cluster, as.Name, err)
	}
	return nil
}

// reported is the member object as a report carries it: without managed fields.
func reported(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return nil
	}
	m := deepCopy(obj.Object)
	unstructured.RemoveNestedField(m, "metadata", "managedFields")
	return m
}

// applied is the Applied condition of an outcome.
func applied(o outcome) metav1.Condition {
	c := metav1.Condition{Type: federation.ConditionApplied, Status: metav1.ConditionTrue, Reason: "Applied"}
	switch {
	case errors.Is(o.err, ErrInvalidAssignment):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonInvalidAssignment, fedcond.Truncate(o.err.Error(), 1024)
	case o.err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonFailed, fedcond.Truncate(o.err.Error(), 1024)
	case o.ch.Reason != "":
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, o.ch.Reason, o.ch.Message
	case o.ch.Action == plan.ActionDelete && o.obj != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, plan.ReasonWaitingForRemoval, "the member object is being deleted; its finalizers hold it"
	}
	return c
}
