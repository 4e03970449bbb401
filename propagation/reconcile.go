package propagation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Event reasons.
const (
	// EventPolicyChanged: another policy (or the first one) now federates the native object.
	EventPolicyChanged = "PolicyChanged"
	// EventPolicyRemoved: no policy selects the native object any more; its generated
	// object was deleted.
	EventPolicyRemoved = "PolicyRemoved"
	// EventFederatedByHand (Warning): a Federated<Kind> of the native object's name exists
	// without the generated label; the loop leaves both alone.
	EventFederatedByHand = "FederatedByHand"
	// EventPreferenceByHand (Warning): a ReplicaSchedulingPreference of the object's name
	// exists that the loop did not write; the policy's scheduling is not applied.
	EventPreferenceByHand = "PreferenceByHand"
	// EventInvalidPolicy (Warning): a policy fails validation; it selects nothing.
	EventInvalidPolicy = "InvalidPolicy"
)

// Reconcile is one pass over the native objects named key, of every type the Propagator
// federates. For each it reads the object, the policies and its Federated<Kind>; chooses
// the policy with [Matches]; and creates, updates or deletes the generated object (and the
// ReplicaSchedulingPreference of a policy's spec.scheduling) only when it changes. It then
// records the policy on the native object and, for workload kinds, the fleet's counts in
// its status. Invalid policies are skipped, with a Warning event on them.
func (p *Propagator) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return p.reconcileFrom(ctx, p.host, key)
}

func (p *Propagator) reconcileFrom(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, error) {
	pass := loop.Pass{Loop: fedmetrics.LoopPropagation, Clock: p.opts.Clock, Logger: p.opts.Logger, Observe: p.metrics.Observe}
	return pass.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) {
		policies, err := p.policies(ctx, r, key.Namespace)
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
		outcome, errs := fedmetrics.OutcomeUnchanged, []error(nil)
		for _, t := range p.types {
			wrote, err := p.reconcileType(ctx, r, t, key, policies)
			if err != nil {
				errs = append(errs, fmt.Errorf("propagation: %s %s: %w", t.Target.Kind, key, err))
			}
			if wrote {
				outcome = fedmetrics.OutcomeWritten
			}
		}
		if len(errs) > 0 {
			return federation.Result{}, fedmetrics.OutcomeError, errors.Join(errs...)
		}
		return federation.Result{}, outcome, nil
	})
}

// policies reads the PropagationPolicies of namespace and every ClusterPropagationPolicy;
// those that do not decode or validate are left out, with a Warning once per version.
func (p *Propagator) policies(ctx context.Context, r federation.Reader, namespace string) ([]Policy, error) {
	var out []Policy
	for _, src := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
	}{{federation.PropagationPolicyGVR, namespace}, {federation.ClusterPropagationPolicyGVR, ""}} {
		list, err := r.List(ctx, src.gvr, src.namespace, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("propagation: list %s: %w", src.gvr.Resource, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			pol, err := DecodePolicy(u)
			if err != nil {
				p.warnOnce(ctx, u, "policy/"+u.GetNamespace()+"/"+u.GetName(), u.GetResourceVersion(), EventInvalidPolicy, err.Error())
				continue
			}
			out = append(out, pol)
		}
	}
	return out, nil
}

// DecodePolicy decodes and validates a PropagationPolicy or ClusterPropagationPolicy (by its
// kind). The error names the policy and every invalid field.
func DecodePolicy(u *unstructured.Unstructured) (Policy, error) {
	switch u.GetKind() {
	case federation.ClusterPropagationPolicyGVK.Kind:
		cp, err := federation.ClusterPropagationPolicyFromUnstructured(u)
		if err != nil {
			return Policy{}, err
		}
		if err := federation.NewInvalidError(cp.Kind, federation.Key{Name: cp.Name}, federation.ValidateClusterPropagationPolicy(cp)); err != nil {
			return Policy{}, err
		}
		return Policy{Name: cp.Name, Spec: cp.Spec}, nil
	case federation.PropagationPolicyGVK.Kind:
		pp, err := federation.PropagationPolicyFromUnstructured(u)
		if err != nil {
			return Policy{}, err
		}
		if err := federation.NewInvalidError(pp.Kind, federation.Key{Namespace: pp.Namespace, Name: pp.Name}, federation.ValidatePropagationPolicy(pp)); err != nil {
			return Policy{}, err
		}
		return Policy{Namespace: pp.Namespace, Name: pp.Name, Spec: pp.Spec}, nil
	}
	return Policy{}, fmt.Errorf("%w: %s %s is not a propagation policy", federation.ErrInvalidObject, u.GetKind(), u.GetName())
}

// get reads one object through r; a missing one is nil without error.
func get(ctx context.Context, r federation.Reader, gvr schema.GroupVersionResource, key federation.Key) (*unstructured.Unstructured, error) {
	u, err := r.Get(ctx, gvr, key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", gvr.Resource, err)
	}
	return u, nil
}

// Selectable reports whether a policy may select native: not a member copy the federation
// manages (a host that is also a member), nor credentials ([federation.Credentials]: a
// Cluster's, a service-account token), which the dependencies loop refuses alike.
func Selectable(native *unstructured.Unstructured) bool {
	return native.GetLabels()[federation.ManagedByLabel] == "" && federation.Credentials(native, "") == ""
}

// Generated reports whether u (a Federated<Kind> or preference) was written by this loop.
func Generated(u *unstructured.Unstructured) bool {
	return u != nil && u.GetLabels()[federation.GeneratedByLabel] == federation.GeneratedByPropagation
}

// reconcileType is the pass for one type. wrote reports a write to the host.
func (p *Propagator) reconcileType(ctx context.Context, r federation.Reader, t federation.TypeConfig, key federation.Key, policies []Policy) (wrote bool, err error) {
	native, err := get(ctx, r, t.TargetGVR(), key)
	if err != nil {
		return false, err
	}
	fed, err := get(ctx, r, t.FederatedGVR(), key)
	if err != nil {
		return false, err
	}
	var matches []Match
	if native != nil && native.GetDeletionTimestamp() == nil && Selectable(native) {
		if native.GetAPIVersion() == "" {
			native.SetAPIVersion(t.Target.GroupVersion().String())
			native.SetKind(t.Target.Kind)
		}
		matches = Matches(native, policies)
	}
	if len(matches) == 0 {
		return p.unselected(ctx, t, native, fed)
	}
	if fed != nil && !Generated(fed) {
		p.warnOnce(ctx, native, "fed/"+t.Target.Kind+"/"+key.String(), string(fed.GetUID()), EventFederatedByHand,
			fmt.Sprintf("%s %s exists and was not generated from this %s: it is left alone, and so is this object", t.Federated.Kind, key, t.Target.Kind))
		return false, nil
	}
	p.forget("fed/" + t.Target.Kind + "/" + key.String())
	if fed != nil && fed.GetDeletionTimestamp() != nil {
		return false, nil // sync is deleting it; its deletion event brings the key back
	}
	// The policy annotation first: a Deployment's generation moves with its annotations, and
	// the generated object records the generation it was rendered from.
	wrote, err = p.annotate(ctx, t, native, matches)
	if err != nil {
		return wrote, err
	}
	win := matches[0].Policy
	desired, err := Generate(t, native, win)
	if err != nil {
		return false, err
	}
	if fed == nil {
		if fed, err = p.host.Create(ctx, t.FederatedGVR(), desired); err != nil {
			return wrote, fmt.Errorf("create %s: %w", t.Federated.Kind, err)
		}
		wrote = true
	} else if next, changed := merge(fed, desired); changed {
		if fed, err = p.host.Update(ctx, t.FederatedGVR(), next); err != nil {
			return wrote, fmt.Errorf("update %s: %w", t.Federated.Kind, err)
		}
		wrote = true
	}
	w, err := p.preference(ctx, r, t, native, fed, win)
	wrote = wrote || w
	if err != nil {
		return wrote, err
	}
	w, err = p.writeStatus(ctx, t, native, fed)
	return wrote || w, err
}

// unselected deletes the generated object (and its preference) of a native object that is
// gone, being deleted, or selected by no policy, and drops the policy annotation.
func (p *Propagator) unselected(ctx context.Context, t federation.TypeConfig, native, fed *unstructured.Unstructured) (bool, error) {
	wrote := false
	if Generated(fed) && fed.GetDeletionTimestamp() == nil {
		if err := p.delete(ctx, federation.ReplicaSchedulingPreferenceGVR, fed, true); err != nil {
			return false, err
		}
		if err := p.delete(ctx, t.FederatedGVR(), fed, false); err != nil {
			return false, err
		}
		wrote = true
	}
	if native == nil || native.GetDeletionTimestamp() != nil {
		return wrote, nil
	}
	old, ok := native.GetAnnotations()[federation.PolicyAnnotation]
	if !ok {
		return wrote, nil
	}
	if _, err := p.patchPolicy(ctx, t, native, nil); err != nil {
		return wrote, err
	}
	p.event(ctx, native, federation.EventTypeNormal, EventPolicyRemoved, fmt.Sprintf("no policy selects it any more (was %s): %s %s deleted", old, t.Federated.Kind, native.GetName()))
	return true, nil
}

// delete deletes fed (preference: the preference of fed's name, only when generated and
// owned by fed) with a precondition on its uid.
func (p *Propagator) delete(ctx context.Context, gvr schema.GroupVersionResource, fed *unstructured.Unstructured, preference bool) error {
	uid := fed.GetUID()
	if preference {
		rsp, err := get(ctx, p.host, gvr, federation.Key{Namespace: fed.GetNamespace(), Name: fed.GetName()})
		if err != nil || !Generated(rsp) || !ownedBy(rsp, fed) {
			return err
		}
		uid = rsp.GetUID()
	}
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := p.host.Delete(ctx, gvr, fed.GetNamespace(), fed.GetName(), opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s/%s: %w", gvr.Resource, fed.GetNamespace(), fed.GetName(), err)
	}
	return nil
}

func ownedBy(u, owner *unstructured.Unstructured) bool {
	for _, ref := range u.GetOwnerReferences() {
		if ref.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// ownedAnnotations are the generated object's annotations the loop owns: present when
// desired has them, absent when it does not.
var ownedAnnotations = []string{federation.PolicyAnnotation, SourceGenerationAnnotation, federation.OrphanAnnotation, federation.AdoptAnnotation}

// merge returns live with desired's spec, generated label, owned annotations and owner
// references, and whether that changed anything. Everything else (finalizers, other
// labels and annotations, status) is live's.
func merge(live, desired *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	next := live.DeepCopy()
	changed := false
	if !sameJSON(live.Object["spec"], desired.Object["spec"]) {

		next.Object["spec"] = desired.Object["spec"]
		changed = true
	}
	labels := next.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	if labels[federation.GeneratedByLabel] != federation.GeneratedByPropagation {
		labels[federation.GeneratedByLabel] = federation.GeneratedByPropagation
		next.SetLabels(labels)
		changed = true
	}
	ann := next.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	want := desired.GetAnnotations()
	for _, k := range ownedAnnotations {
		v, ok := want[k]
		if cur, has := ann[k]; has == ok && cur == v {
			continue
		}
		if ok {
			ann[k] = v
		} else {
			delete(ann, k)
		}
		changed = true
	}
	next.SetAnnotations(ann)
	if !reflect.DeepEqual(live.GetOwnerReferences(), desired.GetOwnerReferences()) {
		next.SetOwnerReferences(desired.GetOwnerReferences())
		changed = true
	}
	return next, changed
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// preference writes, updates or deletes the ReplicaSchedulingPreference of win's
// spec.scheduling. One the loop did not write is left alone, with a Warning.
func (p *Propagator) preference(ctx context.Context, r federation.Reader, t federation.TypeConfig, native, fed *unstructured.Unstructured, win Policy) (bool, error) {
	key := federation.Key{Namespace: fed.GetNamespace(), Name: fed.GetName()}
	live, err := get(ctx, r, federation.ReplicaSchedulingPreferenceGVR, key)
	if err != nil {
		return false, err
	}
	desired, err := Preference(t, native, fed, win)
	if err != nil {
		return false, err
	}
	if live != nil && !Generated(live) {
		if desired != nil {
			p.warnOnce(ctx, native, "rsp/"+key.String(), string(live.GetUID()), EventPreferenceByHand,
				fmt.Sprintf("ReplicaSchedulingPreference %s was not written by policy %s: its spec.scheduling is not applied", key, win.Ref()))
		}
		return false, nil
	}
	p.forget("rsp/" + key.String())
	switch {
	case desired == nil && live == nil:
		return false, nil
	case desired == nil:
		return true, p.delete(ctx, federation.ReplicaSchedulingPreferenceGVR, fed, true)
	case live == nil:
		if _, err := p.host.Create(ctx, federation.ReplicaSchedulingPreferenceGVR, desired); err != nil {
			return false, fmt.Errorf("create ReplicaSchedulingPreference: %w", err)
		}
		return true, nil
	}
	next, changed := merge(live, desired)
	if !changed {
		return false, nil
	}
	if _, err := p.host.Update(ctx, federation.ReplicaSchedulingPreferenceGVR, next); err != nil {
		return false, fmt.Errorf("update ReplicaSchedulingPreference: %w", err)
	}
	return true, nil
}

// annotate records the winning policy on the native object, with an event when it changed.
func (p *Propagator) annotate(ctx context.Context, t federation.TypeConfig, native *unstructured.Unstructured, matches []Match) (bool, error) {
	ref := matches[0].Policy.Ref()
	old, had := native.GetAnnotations()[federation.PolicyAnnotation]
	if had && old == ref {
		return false, nil
	}
	updated, err := p.patchPolicy(ctx, t, native, ref)
	if err != nil {
		return false, err
	}
	*native = *updated
	msg := "federated by " + describe(matches[0])
	if had {
		msg += "; was " + old
	}
	if len(matches) > 1 {
		var lost []string
		for _, m := range matches[1:] {
			lost = append(lost, m.Policy.Ref()+" ("+Lost(matches[0], m)+")")
		}
		msg += "; also matched: " + strings.Join(lost, ", ")
	}
	p.event(ctx, native, federation.EventTypeNormal, EventPolicyChanged, msg)
	return true, nil
}

// patchPolicy sets (ref a string) or removes (nil) the policy annotation of the user's native
// object with a merge patch of that annotation alone, locked on the resourceVersion read: the
// loop writes nothing else of the object (its role may patch native objects, never update
// them), and a change made since the read is a Conflict, not overwritten.
func (p *Propagator) patchPolicy(ctx context.Context, t federation.TypeConfig, native *unstructured.Unstructured, ref any) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": native.GetResourceVersion(),
		"annotations":     map[string]any{federation.PolicyAnnotation: ref},
	}})
	if err != nil {
		return nil, err
	}
	out, err := p.host.Patch(ctx, t.TargetGVR(), native.GetNamespace(), native.GetName(), types.MergePatchType, data)
	if err != nil {
		return nil, fmt.Errorf("patch %s %s/%s: %w", t.Target.Kind, native.GetNamespace(), native.GetName(), err)
	}
	return out, nil
}

func describe(m Match) string {
	kind := "PropagationPolicy"
	if m.Policy.Cluster() {
		kind = "ClusterPropagationPolicy"
	}
	return fmt.Sprintf("%s %s (priority %d, selected %s)", kind, m.Policy.Ref(), m.Policy.Spec.Priority, m.Specificity)
}

// writeStatus writes the fleet's counts into a workload's native status, when they changed.
func (p *Propagator) writeStatus(ctx context.Context, t federation.TypeConfig, native, fed *unstructured.Unstructured) (bool, error) {
	fields, ok := NativeStatus(native, fed)
	if !ok {
		return false, nil
	}
	n := native.DeepCopy()
	changed := false
	for k, v := range fields {
		cur, found, _ := unstructured.NestedFieldNoCopy(n.Object, "status", k)
		if found && sameJSON(cur, v) {
			continue
		}
		if err := unstructured.SetNestedField(n.Object, v, "status", k); err != nil {
			return false, fmt.Errorf("%w: %s %s status: %v", federation.ErrInvalidObject, t.Target.Kind, native.GetName(), err)
		}
		changed = true
	}
	if !changed {
		return false, nil
	}
	if _, err := p.host.UpdateStatus(ctx, t.TargetGVR(), n); err != nil {
		return false, fmt.Errorf("update %s status: %w", t.Target.Kind, err)
	}
	return true, nil
}

// warnOnce records a Warning on obj unless the same warning was recorded for what (the
// same version, or uid, of the object it is about).
func (p *Propagator) warnOnce(ctx context.Context, obj runtime.Object, what, version, reason, msg string) {
	p.mu.Lock()
	seen := p.warned[what] == version+"\x00"+msg
	p.warned[what] = version + "\x00" + msg
	p.mu.Unlock()
	if !seen {
		p.event(ctx, obj, federation.EventTypeWarning, reason, msg)
	}
}

func (p *Propagator) forget(what string) {
	p.mu.Lock()
	delete(p.warned, what)
	p.mu.Unlock()
}

// event records an event on obj through Options.Events and logs it.
func (p *Propagator) event(ctx context.Context, obj runtime.Object, typ, reason, msg string) {
	log := logr.FromContextOrDiscard(ctx)
	if typ != federation.EventTypeWarning {
		log = log.V(1)
	}
	log.Info(msg, "reason", reason)
	if p.opts.Events != nil {
		p.opts.Events.Eventf(obj, typ, reason, "%s", msg)
	}
}
