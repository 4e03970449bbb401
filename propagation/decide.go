package propagation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// Input is what [DecideWrites] decides on: one native object, its Federated<Kind> and
// preference as the driver read them, and the policies that may select it. It is read
// only.
type Input struct {
	// Type is the native object's type.
	Type federation.TypeConfig
	// Native is the native object; nil when there is none.
	Native *unstructured.Unstructured
	// Federated is the Federated<Kind> of the same namespace and name; nil when there is
	// none.
	Federated *unstructured.Unstructured
	// Preference is the ReplicaSchedulingPreference of that name; nil when there is none, or
	// it was not read (Read).
	Preference *unstructured.Unstructured
	// Read says how Preference was read. DecideWrites asks for the read it needs
	// (Writes.Read) before it decides anything about the preference.
	Read Read
	// Policies are the PropagationPolicies of the object's namespace and every
	// ClusterPropagationPolicy, invalid ones with their Err.
	Policies []Policy
	// ControlPlaneNamespace is the control plane's own namespace: no policy selects there
	// ([federation.ReservedNamespace]). The loop passes Options.ControlPlaneNamespace.
	ControlPlaneNamespace string
}

// Read is how the driver read Input.Preference.
type Read int

const (
	// NotRead: the preference was not read.
	NotRead Read = iota
	// Cached: read from a cache, which may lag the host.
	Cached
	// Live: read from the host's API server. A preference is deleted only on a live read:
	// one a cache has not seen yet would stay behind its deleted owner.
	Live
)

// Writes is what one call of [DecideWrites] decides. The driver carries out Writes in order,
// replaces the objects of its Input with the host's answers, and calls DecideWrites again
// while Again is set. It is read only.
type Writes struct {
	// Policy is which policy federates the native object ([Decide]); its Winner is empty
	// when none does.
	Policy Decision
	// Read, when set, is the read of the preference the decision needs first: nothing else
	// is decided. The driver reads it and calls DecideWrites again.
	Read Read
	// Writes are the host writes due now, in order.
	Writes []Write
	// Again: more writes depend on the answers to these (the native object's generation
	// after a patch, the uid of a created object, the version an orphaning mark wrote).
	Again bool
	// Warnings are recorded on the native object once per change of their Key and Version.
	Warnings []Warning
	// Settled are the Keys of warnings that no longer apply: the next one is recorded
	// again.
	Settled []string
}

// Target is the object a [Write] changes.
type Target string

const (
	// TargetNative is the user's native object.
	TargetNative Target = "native"
	// TargetFederated is its generated Federated<Kind>.
	TargetFederated Target = "federated"
	// TargetPreference is the ReplicaSchedulingPreference of a policy's spec.scheduling.
	TargetPreference Target = "preference"
)

// Verb is what a [Write] does.
type Verb string

const (
	// Create creates Write.Object.
	Create Verb = "create"
	// Update updates the target to Write.Object, locked on its resourceVersion.
	Update Verb = "update"
	// UpdateStatus writes Write.Object's status through the status subresource.
	UpdateStatus Verb = "updateStatus"
	// Patch sends Write.Patch, a JSON merge patch, locked on the resourceVersion of the
	// native object the driver holds (the one read, or the answer to the write before).
	Patch Verb = "patch"
	// Delete deletes the target with Write.Preconditions.
	Delete Verb = "delete"
)

// Write is one host write of [Writes].
type Write struct {
	Target Target
	Verb   Verb
	// Object is what Create, Update and UpdateStatus send.
	Object *unstructured.Unstructured
	// Patch is the merge patch of Patch, without a resourceVersion.
	Patch map[string]any
	// Preconditions are Delete's: the uid read, and the resourceVersion when only that
	// version may go (one marked federation.OrphanAnnotation).
	Preconditions metav1.Preconditions
	// Event, when set, is recorded on the host's answer once the write succeeded.
	Event *Event
}

// Event is an event to record on the native object.
type Event struct {
	Type, Reason, Message string
}

// Warning is a Warning event recorded once per change: again only when Version (the object
// it is about, the error) or Message changed since the last one of Key.
type Warning struct {
	Key, Version, Reason, Message string
}

// DecideWrites decides the host writes of one pass over one native object, as the
// [Propagator] carries them out. It is pure: the same Input gives the same Writes.
//
//   - A native object that is gone, being deleted, not selectable, or that no policy selects:
//     its generated object goes (marked federation.OrphanAnnotation first, so its member
//     copies stay, unless its policy asked for spec.removal Delete or the native object
//     goes), with its preference, and the native object loses the policy annotation and the
//     fleet's counts ([ClearedStatus]).
//   - A Federated<Kind> written by hand: a Warning, and nothing is written.
//   - An invalid policy that federates it (Policy.Frozen): a Warning; the generated object
//     keeps its last valid spec; only the fleet's counts are written.
//   - Otherwise, in order, each once the answer to the one before is in: sync's automated
//     rollback restored into the native object ([RolledBackTemplate]), the policy
//     annotation, the generated object ([Generate]), its preference ([Preference]) and the
//     fleet's counts ([NativeStatus]).
//
// The error is an object that cannot be rendered.
func DecideWrites(in Input) (Writes, error) {
	native, d, ok := choose(in)
	if !ok || d.Winner.Policy.Name == "" {
		return unselected(in), nil
	}
	w := Writes{Policy: d}
	what := in.Type.Target.Kind + "/" + key(native).String()
	fed := in.Federated
	if fed != nil && !Generated(fed) {
		w.Warnings = append(w.Warnings, Warning{Key: "fed/" + what, Version: string(fed.GetUID()), Reason: EventFederatedByHand,
			Message: fmt.Sprintf("%s %s exists and was not generated from this %s: it is left alone, and so is this object", in.Type.Federated.Kind, key(native), in.Type.Target.Kind)})
		return w, nil
	}
	w.Settled = append(w.Settled, "fed/"+what)
	if fed != nil && fed.GetDeletionTimestamp() != nil {
		return w, nil // sync is deleting it; its deletion event brings the key back
	}
	if d.Frozen {
		// An invalid policy never undoes its last valid decision: its generated object
		// stays as it is until the policy is fixed or deleted.
		w.Warnings = append(w.Warnings, Warning{Key: "frozen/" + what, Version: d.Winner.Policy.Err.Error(), Reason: EventPolicyInvalid,
			Message: fmt.Sprintf("policy %s is invalid, so %s %s keeps its last valid spec: %v", d.Winner.Policy.Ref(), in.Type.Federated.Kind, key(native), d.Winner.Policy.Err)})
		return w, w.status(in.Type, native, fed)
	}
	w.Settled = append(w.Settled, "frozen/"+what)
	if in.Read == NotRead {
		w.Read = Cached
		return w, nil
	}
	return w, w.selected(in, native)
}

// selected adds the writes of a native object its policy (w.Policy) federates, the first
// step whose writes are due.
func (w *Writes) selected(in Input, native *unstructured.Unstructured) error {
	for _, step := range []func(*Writes, Input, *unstructured.Unstructured) (bool, error){
		(*Writes).rollBack, (*Writes).annotate, (*Writes).generate, (*Writes).preference,
	} {
		if done, err := step(w, in, native); err != nil || done {
			return err
		}
	}
	return w.status(in.Type, native, in.Federated)
}

// rollBack restores the template of sync's automated rollback into the native object
// ([RolledBackTemplate]): sync's rollback of the generated object lasts only once the
// native object, which it is rendered from, holds it too.
func (w *Writes) rollBack(in Input, native *unstructured.Unstructured) (bool, error) {
	if in.Federated == nil {
		return false, nil
	}
	template, revision, ok := RolledBackTemplate(native, in.Federated)
	if !ok {
		return false, nil
	}
	patch, err := templatePatch(native, template)
	if err != nil {
		return false, fmt.Errorf("restore revision %s into %s %s: %w", revision, in.Type.Target.Kind, key(native), err)
	}
	if patch == nil {
		return false, nil // it holds the template already (a pass that stopped half way)
	}
	w.add(Write{Target: TargetNative, Verb: Patch, Patch: patch, Event: &Event{Type: federation.EventTypeWarning, Reason: EventRolledBack, Message: fmt.Sprintf(
		"the rollout of %s %s failed and was rolled back (spec.rollout.autoRollback): the template of revision %s is restored into this %s",
		in.Type.Federated.Kind, in.Federated.GetName(), revision, in.Type.Target.Kind)}})
	w.Again = true
	return true, nil
}

// annotate records the winning policy on the native object, with an event, when it
// changed. It comes before the generated object: a Deployment's generation moves with its
// annotations, and the generated object records the generation it was rendered from.
func (w *Writes) annotate(_ Input, native *unstructured.Unstructured) (bool, error) {
	d := w.Policy
	ref := d.Winner.Policy.Ref()
	old, had := native.GetAnnotations()[federation.PolicyAnnotation]
	if had && old == ref {
		return false, nil
	}
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
	w.add(Write{Target: TargetNative, Verb: Patch, Patch: policyPatch(ref), Event: &Event{Type: federation.EventTypeNormal, Reason: EventPolicyChanged, Message: msg}})
	w.Again = true
	return true, nil
}

// generate creates or updates the generated object ([Generate]) when it differs.
func (w *Writes) generate(in Input, native *unstructured.Unstructured) (bool, error) {
	desired, err := Generate(in.Type, native, w.Policy.Winner.Policy)
	if err != nil {
		return false, err
	}
	fed := in.Federated
	if fed == nil {
		w.add(Write{Target: TargetFederated, Verb: Create, Object: desired})
	} else if next, changed := merge(fed, desired); changed {
		w.add(Write{Target: TargetFederated, Verb: Update, Object: next})
	} else {
		return false, nil
	}
	w.Again = true // the preference is owned by the answer's uid
	return true, nil
}

// preference creates, updates or deletes the ReplicaSchedulingPreference of the winning
// policy's spec.scheduling ([Preference]). One the loop did not write is left alone, with a
// Warning when the policy asks for one. It never stops the status write that follows: it
// reports done only when it needs a live read first.
func (w *Writes) preference(in Input, native *unstructured.Unstructured) (bool, error) {
	fed, live, win := in.Federated, in.Preference, w.Policy.Winner.Policy
	desired, err := Preference(in.Type, native, fed, win)
	if err != nil {
		return false, err
	}
	what := key(fed).String()
	if live != nil && !Generated(live) {
		if desired != nil {
			w.Warnings = append(w.Warnings, Warning{Key: "rsp/" + what, Version: string(live.GetUID()), Reason: EventPreferenceByHand,
				Message: fmt.Sprintf("ReplicaSchedulingPreference %s was not written by policy %s: its spec.scheduling is not applied", what, win.Ref())})
		}
		return false, nil
	}
	w.Settled = append(w.Settled, "rsp/"+what)
	switch {
	case desired == nil && live == nil:
	case desired == nil:
		return w.deletePreference(in)
	case live == nil:
		w.add(Write{Target: TargetPreference, Verb: Create, Object: desired})
	default:
		if next, changed := merge(live, desired); changed {
			w.add(Write{Target: TargetPreference, Verb: Update, Object: next})
		}
	}
	return false, nil
}

// deletePreference deletes the preference of in's name when a live read shows it generated
// and owned by in.Federated; without a live read it asks for one (and reports done).
func (w *Writes) deletePreference(in Input) (bool, error) {
	if in.Read != Live {
		w.Read = Live
		return true, nil
	}
	rsp := in.Preference
	if !Generated(rsp) || !ownedBy(rsp, in.Federated) {
		return false, nil
	}
	w.add(Write{Target: TargetPreference, Verb: Delete, Preconditions: uidOf(rsp)})
	return false, nil
}

// status writes the fleet's counts into a workload's native status ([NativeStatus]), when
// they changed.
func (w *Writes) status(typ federation.TypeConfig, native, fed *unstructured.Unstructured) error {
	fields, ok := NativeStatus(native, fed)
	if !ok {
		return nil
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
			return fmt.Errorf("%w: %s %s status: %v", federation.ErrInvalidObject, typ.Target.Kind, native.GetName(), err)
		}
		changed = true
	}
	if changed {
		w.add(Write{Target: TargetNative, Verb: UpdateStatus, Object: n})
	}
	return nil
}

// unselected decides for a native object that is gone, being deleted, or federated by no
// policy any more. Its generated object (and preference) is deleted. The member copies go
// with it only when the native object goes, or its last policy asked for it (spec.removal
// Delete, recorded as federation.RemovalAnnotation). Otherwise the generated object is
// marked federation.OrphanAnnotation first, so sync leaves the copies running, no longer
// managed. A native object that stays loses the policy annotation and the fleet's counts
// in its status: nothing of the federation runs for it any more.
func unselected(in Input) Writes {
	var w Writes
	if fed := in.Federated; Generated(fed) && fed.GetDeletionTimestamp() == nil {
		if w.retire(in) {
			return w
		}
	}
	if native := in.Native; native != nil && native.GetDeletionTimestamp() == nil {
		w.release(in)
	}
	return w
}

// retire deletes the generated object in.Federated and its preference, marked orphaning
// first when the native object stays and its policy did not ask for spec.removal Delete. It
// reports whether the pass must wait: for a live read of the preference, or for the
// answer to the mark.
func (w *Writes) retire(in Input) bool {
	if in.Read != Live {
		w.Read = Live
		return true
	}
	native, fed := in.Native, in.Federated
	if rsp := in.Preference; Generated(rsp) && ownedBy(rsp, fed) {
		w.add(Write{Target: TargetPreference, Verb: Delete, Preconditions: uidOf(rsp)})
	}
	stays := native != nil && native.GetDeletionTimestamp() == nil
	if stays && fed.GetAnnotations()[federation.RemovalAnnotation] != string(federation.PolicyRemovalDelete) && !orphaned(fed) {
		w.add(Write{Target: TargetFederated, Verb: Update, Object: withOrphan(fed)})
		w.Again = true // only the version marked orphaning is deleted
		return true
	}
	pre := uidOf(fed)
	if rv := fed.GetResourceVersion(); rv != "" && orphaned(fed) {
		// Only the version marked orphaning is deleted: the mark decides what sync does
		// with the member copies, so a change since (the mark removed) must be seen first.
		pre.ResourceVersion = &rv
	}
	w.add(Write{Target: TargetFederated, Verb: Delete, Preconditions: pre})
	return false
}

// release takes what the federation wrote off the native object that stays: the fleet's
// counts ([ClearedStatus]) and the policy annotation, with an event saying what became of
// the member copies.
func (w *Writes) release(in Input) {
	native, fed := in.Native, in.Federated
	if cleared, changed := ClearedStatus(native); changed {
		w.add(Write{Target: TargetNative, Verb: UpdateStatus, Object: cleared})
	}
	old, ok := native.GetAnnotations()[federation.PolicyAnnotation]
	if !ok {
		return
	}
	what := "its member copies keep running, no longer managed"
	if fed != nil && !orphaned(fed) {
		what = "its member copies are deleted"
	}
	w.add(Write{Target: TargetNative, Verb: Patch, Patch: policyPatch(nil), Event: &Event{Type: federation.EventTypeNormal, Reason: EventPolicyRemoved,
		Message: fmt.Sprintf("no policy selects it any more (was %s): %s %s deleted; %s", old, in.Type.Federated.Kind, native.GetName(), what)}})
}

// choose is which policy federates in.Native ([Decide]), and the native object with its
// kind set. ok is false when no policy may have it: it is gone, being deleted, or not
// selectable ([Selectable], or in a namespace [federation.ReservedNamespace] names). The
// Propagator and the PolicyMonitor both decide through it.
func choose(in Input) (native *unstructured.Unstructured, d Decision, ok bool) {
	native = in.Native
	if native == nil || native.GetDeletionTimestamp() != nil || !Selectable(native) ||
		federation.ReservedNamespace(native.GetNamespace(), in.ControlPlaneNamespace) != "" {
		return native, Decision{}, false
	}
	if native.GetAPIVersion() == "" {
		native = native.DeepCopy()
		native.SetAPIVersion(in.Type.Target.GroupVersion().String())
		native.SetKind(in.Type.Target.Kind)
	}
	return native, Decide(native, in.Policies, holder(in.Federated)), true
}

func (w *Writes) add(x Write) { w.Writes = append(w.Writes, x) }

// key is u's namespace and name.
func key(u *unstructured.Unstructured) federation.Key {
	return federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
}

// orphaned reports whether fed carries federation.OrphanAnnotation.
func orphaned(fed *unstructured.Unstructured) bool {
	return fed.GetAnnotations()[federation.OrphanAnnotation] == "true"
}

// withOrphan is fed marked federation.OrphanAnnotation, so that its deletion leaves the
// member copies in place.
func withOrphan(fed *unstructured.Unstructured) *unstructured.Unstructured {
	n := fed.DeepCopy()
	ann := n.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[federation.OrphanAnnotation] = "true"
	n.SetAnnotations(ann)
	return n
}

// uidOf is the precondition on u's uid (none when it has none).
func uidOf(u *unstructured.Unstructured) metav1.Preconditions {
	if uid := u.GetUID(); uid != "" {
		return metav1.Preconditions{UID: &uid}
	}
	return metav1.Preconditions{}
}

// policyPatch sets (ref a string) or removes (nil) the policy annotation: the loop writes
// nothing else of the user's object but its status and a rollback's template.
func policyPatch(ref any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": map[string]any{federation.PolicyAnnotation: ref}}}
}

func describe(m Match) string {
	kind := "PropagationPolicy"
	if m.Policy.Cluster() {
		kind = "ClusterPropagationPolicy"
	}
	return fmt.Sprintf("%s %s (priority %d, selected %s)", kind, m.Policy.Ref(), m.Policy.Spec.Priority, m.Specificity)
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
