package propagation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

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
	// EventInvalidPolicy (Warning), on a policy: it fails validation. It selects nothing
	// new, and what it federates keeps its last valid decision. [PolicyMonitor] records it.
	EventInvalidPolicy = "InvalidPolicy"
	// EventPolicyInvalid (Warning), on a native object: the policy that federates it is
	// invalid, so its generated object keeps its last valid spec.
	EventPolicyInvalid = "PolicyInvalid"
)

// Reconcile is one pass over the native objects named key, of every type the Propagator
// federates. For each it reads the object, the policies and its Federated<Kind>; chooses
// the policy with [Matches]; and creates, updates or deletes the generated object (and the
// ReplicaSchedulingPreference of a policy's spec.scheduling) only when it changes. It then
// records the policy on the native object and, for workload kinds, the fleet's counts in
// its status. An invalid policy selects nothing new, and the objects it federates keep
// their generated object as it is, with a Warning on them.
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

// policies reads the PropagationPolicies of namespace and every ClusterPropagationPolicy
// ([decodeCache.list]).
func (p *Propagator) policies(ctx context.Context, r federation.Reader, namespace string) ([]Policy, error) {
	return p.decoded.list(ctx, r, namespace)
}

// DecodePolicy decodes and validates a PropagationPolicy or ClusterPropagationPolicy (by its
// kind). The error names the policy and every invalid field.
func DecodePolicy(u *unstructured.Unstructured) (Policy, error) {
	pol := decodePolicy(u)
	if pol.Err != nil {
		return Policy{}, pol.Err
	}
	return pol, nil
}

// decodePolicy is DecodePolicy with the error in the Policy, which always has u's name:
// an invalid policy still names what it federated.
func decodePolicy(u *unstructured.Unstructured) Policy {
	switch u.GetKind() {
	case federation.ClusterPropagationPolicyGVK.Kind:
		pol := Policy{Name: u.GetName()}
		cp, err := federation.ClusterPropagationPolicyFromUnstructured(u)
		if err != nil {
			pol.Err = err
			return pol
		}
		pol.Spec = cp.Spec
		pol.Err = federation.NewInvalidError(cp.Kind, federation.Key{Name: cp.Name}, federation.ValidateClusterPropagationPolicy(cp))
		return pol
	case federation.PropagationPolicyGVK.Kind:
		pol := Policy{Namespace: u.GetNamespace(), Name: u.GetName()}
		pp, err := federation.PropagationPolicyFromUnstructured(u)
		if err != nil {
			pol.Err = err
			return pol
		}
		pol.Spec = pp.Spec
		pol.Err = federation.NewInvalidError(pp.Kind, federation.Key{Namespace: pp.Namespace, Name: pp.Name}, federation.ValidatePropagationPolicy(pp))
		return pol
	}
	return Policy{Namespace: u.GetNamespace(), Name: u.GetName(),
		Err: fmt.Errorf("%w: %s %s is not a propagation policy", federation.ErrInvalidObject, u.GetKind(), u.GetName())}
}

// decodeCache keeps decoded policies per uid and resourceVersion: a pass reads every
// policy of its scope, and a policy changes seldom.
type decodeCache struct {
	mu sync.Mutex
	m  map[types.UID]decodedPolicy
}

type decodedPolicy struct {
	resourceVersion string
	policy          Policy
}

func (c *decodeCache) decode(u *unstructured.Unstructured) Policy {
	uid, rv := u.GetUID(), u.GetResourceVersion()
	c.mu.Lock()
	if d, ok := c.m[uid]; ok && d.resourceVersion == rv && uid != "" {
		c.mu.Unlock()
		return d.policy
	}
	c.mu.Unlock()
	pol := decodePolicy(u)
	if uid == "" {
		return pol
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.UID]decodedPolicy{}
	}
	c.m[uid] = decodedPolicy{resourceVersion: rv, policy: pol}
	return pol
}

// list reads the PropagationPolicies of namespace ("": every namespace) and every
// ClusterPropagationPolicy, decoded and validated once per resourceVersion. Invalid ones
// are in the list with their error: they select nothing, but keep what they federate as it
// is ([Decide]).
func (c *decodeCache) list(ctx context.Context, r federation.Reader, namespace string) ([]Policy, error) {
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
			out = append(out, c.decode(&list.Items[i]))
		}
	}
	return out, nil
}

// forget drops a deleted policy.
func (c *decodeCache) forget(u *unstructured.Unstructured) {
	c.mu.Lock()
	delete(c.m, u.GetUID())
	c.mu.Unlock()
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

// Selectable reports whether a policy may select native: not an object of a system
// namespace ([federation.SystemNamespace]), nor a member copy the federation manages (a host
// that is also a member), nor credentials ([federation.Credentials]: a Cluster's, a
// service-account token), which the dependencies loop refuses alike. The loop also leaves
// out the control plane's own namespace (Options.ControlPlaneNamespace,
// [federation.ReservedNamespace]).
func Selectable(native *unstructured.Unstructured) bool {
	return !federation.SystemNamespace(native.GetNamespace()) && native.GetLabels()[federation.ManagedByLabel] == "" && federation.Credentials(native, "") == ""
}

// Generated reports whether u (a Federated<Kind> or preference) was written by this loop.
func Generated(u *unstructured.Unstructured) bool {
	return u != nil && u.GetLabels()[federation.GeneratedByLabel] == federation.GeneratedByPropagation
}

// holder is the policy that federates an object now: the one its generated
// Federated<Kind> names, unless that is being deleted. "" when none.
func holder(fed *unstructured.Unstructured) string {
	if !Generated(fed) || fed.GetDeletionTimestamp() != nil {
		return ""
	}
	return fed.GetAnnotations()[federation.PolicyAnnotation]
}

// selectable reports whether a policy may select native ([Selectable], and not in a
// namespace [federation.ReservedNamespace] names: the control plane's own).
func (p *Propagator) selectable(native *unstructured.Unstructured) bool {
	return Selectable(native) && federation.ReservedNamespace(native.GetNamespace(), p.opts.ControlPlaneNamespace) == ""
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
	var d Decision
	if native != nil && native.GetDeletionTimestamp() == nil && p.selectable(native) {
		if native.GetAPIVersion() == "" {
			native.SetAPIVersion(t.Target.GroupVersion().String())
			native.SetKind(t.Target.Kind)
		}
		d = Decide(native, policies, holder(fed))
	}
	if d.Winner.Policy.Name == "" {
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
	if d.Frozen {
		// An invalid policy never undoes its last valid decision: its generated object
		// stays as it is until the policy is fixed or deleted.
		p.warnOnce(ctx, native, "frozen/"+t.Target.Kind+"/"+key.String(), d.Winner.Policy.Err.Error(), EventPolicyInvalid,
			fmt.Sprintf("policy %s is invalid, so %s %s keeps its last valid spec: %v", d.Winner.Policy.Ref(), t.Federated.Kind, key, d.Winner.Policy.Err))
		return p.writeStatus(ctx, t, native, fed)
	}
	p.forget("frozen/" + t.Target.Kind + "/" + key.String())
	// Sync's automated rollback of the generated object goes into the native object first,
	// so the object rendered below is the rolled-back one, not the failed one again.
	if fed != nil {
		if native, wrote, err = p.rollBack(ctx, t, native, fed); err != nil {
			return false, err
		}
	}
	// The policy annotation first: a Deployment's generation moves with its annotations, and
	// the generated object records the generation it was rendered from.
	annotated, err := p.annotate(ctx, t, native, d)
	wrote = wrote || annotated
	if err != nil {
		return wrote, err
	}
	win := d.Winner.Policy
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

// unselected handles a native object that is gone, being deleted, or federated by no
// policy any more. Its generated object (and preference) is deleted. The member copies go
// with it only when the native object goes, or its last policy asked for it (spec.removal
// Delete, recorded as federation.RemovalAnnotation). Otherwise the generated object is
// marked federation.OrphanAnnotation first, so sync leaves the copies running, no longer
// managed. A native object that stays loses the policy annotation and the fleet's counts
// in its status: nothing of the federation runs for it any more.
func (p *Propagator) unselected(ctx context.Context, t federation.TypeConfig, native, fed *unstructured.Unstructured) (bool, error) {
	wrote := false
	stays := native != nil && native.GetDeletionTimestamp() == nil
	if Generated(fed) && fed.GetDeletionTimestamp() == nil {
		if err := p.delete(ctx, federation.ReplicaSchedulingPreferenceGVR, fed, true); err != nil {
			return false, err
		}
		if stays && fed.GetAnnotations()[federation.RemovalAnnotation] != string(federation.PolicyRemovalDelete) {
			orphaned, err := p.orphan(ctx, t, fed)
			if err != nil {
				return false, err
			}
			fed = orphaned
		}
		if err := p.delete(ctx, t.FederatedGVR(), fed, false); err != nil {
			return false, err
		}
		wrote = true
	}
	if !stays {
		return wrote, nil
	}
	if cleared, changed := ClearedStatus(native); changed {
		updated, err := p.host.UpdateStatus(ctx, t.TargetGVR(), cleared)
		if err != nil {
			return wrote, fmt.Errorf("update %s status: %w", t.Target.Kind, err)
		}
		native, wrote = updated, true
	}
	old, ok := native.GetAnnotations()[federation.PolicyAnnotation]
	if !ok {
		return wrote, nil
	}
	if _, err := p.patchPolicy(ctx, t, native, nil); err != nil {
		return wrote, err
	}
	what := "its member copies keep running, no longer managed"
	if fed != nil && fed.GetAnnotations()[federation.OrphanAnnotation] != "true" {
		what = "its member copies are deleted"
	}
	p.event(ctx, native, federation.EventTypeNormal, EventPolicyRemoved, fmt.Sprintf("no policy selects it any more (was %s): %s %s deleted; %s", old, t.Federated.Kind, native.GetName(), what))
	return true, nil
}

// orphan marks fed with federation.OrphanAnnotation, so that its deletion leaves the member
// copies in place, and returns the marked object.
func (p *Propagator) orphan(ctx context.Context, t federation.TypeConfig, fed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if fed.GetAnnotations()[federation.OrphanAnnotation] == "true" {
		return fed, nil
	}
	n := fed.DeepCopy()
	ann := n.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[federation.OrphanAnnotation] = "true"
	n.SetAnnotations(ann)
	updated, err := p.host.Update(ctx, t.FederatedGVR(), n)
	if err != nil {
		return nil, fmt.Errorf("mark %s %s/%s orphaning: %w", t.Federated.Kind, fed.GetNamespace(), fed.GetName(), err)
	}
	return updated, nil
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
	if rv := fed.GetResourceVersion(); !preference && rv != "" && fed.GetAnnotations()[federation.OrphanAnnotation] == "true" {
		// Only the version marked orphaning is deleted: the mark decides what sync does
		// with the member copies, so a change since (the mark removed) must be seen first.
		if opts.Preconditions == nil {
			opts.Preconditions = &metav1.Preconditions{}
		}
		opts.Preconditions.ResourceVersion = &rv
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
var ownedAnnotations = []string{federation.PolicyAnnotation, SourceGenerationAnnotation, federation.OrphanAnnotation, federation.AdoptAnnotation,
	federation.RolledBackAnnotation}

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
func (p *Propagator) annotate(ctx context.Context, t federation.TypeConfig, native *unstructured.Unstructured, d Decision) (bool, error) {
	ref := d.Winner.Policy.Ref()
	old, had := native.GetAnnotations()[federation.PolicyAnnotation]
	if had && old == ref {
		return false, nil
	}
	updated, err := p.patchPolicy(ctx, t, native, ref)
	if err != nil {
		return false, err
	}
	*native = *updated
	msg := "federated by " + describe(d.Winner)
	if had {
		msg += "; was " + old
	}
	if len(d.Losers) > 0 {
		var lost []string
		for _, m := range d.Losers {
			lost = append(lost, m.Policy.Ref()+" ("+Lost(d.Winner, m)+")")
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
		// The API server drops zero counts (omitempty): an absent one is a zero already.
		if found && sameJSON(cur, v) || !found && v == 0 {
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

// notifier records events on objects, each Warning once per change.
type notifier struct {
	events federation.EventRecorder
	// warned remembers what was last warned about per object (a hand-federated object, an
	// invalid policy), so a Warning is recorded once per change, not on every pass.
	mu     sync.Mutex
	warned map[string]string
}

// warnOnce records a Warning on obj unless the same warning was recorded for what (the
// same version, or uid, of the object it is about).
func (n *notifier) warnOnce(ctx context.Context, obj runtime.Object, what, version, reason, msg string) {
	n.mu.Lock()
	if n.warned == nil {
		n.warned = map[string]string{}
	}
	seen := n.warned[what] == version+"\x00"+msg
	n.warned[what] = version + "\x00" + msg
	n.mu.Unlock()
	if !seen {
		n.event(ctx, obj, federation.EventTypeWarning, reason, msg)
	}
}

func (n *notifier) forget(what string) {
	n.mu.Lock()
	delete(n.warned, what)
	n.mu.Unlock()
}

// event records an event on obj through the recorder and logs it.
func (n *notifier) event(ctx context.Context, obj runtime.Object, typ, reason, msg string) {
	log := logr.FromContextOrDiscard(ctx)
	if typ != federation.EventTypeWarning {
		log = log.V(1)
	}
	log.Info(msg, "reason", reason)
	if n.events != nil {
		n.events.Eventf(obj, typ, reason, "%s", msg)
	}
}
