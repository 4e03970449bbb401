package propagation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
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
// federates, reading the host's API server. For each it reads the object, the policies and
// its Federated<Kind>, asks [DecideWrites] what to write, carries that out, and asks again
// until nothing is left: the generated object (and the ReplicaSchedulingPreference of a
// policy's spec.scheduling) is created, updated or deleted only when it changes; the policy
// is recorded on the native object and, for workload kinds, the fleet's counts in its
// status. An invalid policy selects nothing new, and the objects it federates keep their
// generated object as it is, with a Warning on them.
func (p *Propagator) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return p.reconcileFrom(ctx, p.host, true, key)
}

// reconcileFrom is the pass reading through r; live says r is the host's API server.
func (p *Propagator) reconcileFrom(ctx context.Context, r federation.Reader, live bool, key federation.Key) (federation.Result, error) {
	pass := loop.Pass{Loop: fedmetrics.LoopPropagation, Clock: p.opts.Clock, Logger: p.opts.Logger, Observe: p.metrics.Observe}
	return pass.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) {
		policies, err := p.policies(ctx, r, key.Namespace)
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
		outcome, errs := fedmetrics.OutcomeUnchanged, []error(nil)
		for _, t := range p.types {
			wrote, err := p.reconcileType(ctx, reader{r, live}, t, key, policies)
			if err != nil {
				errs = append(errs, fmt.Errorf("propagation: %s %s: %w", t.Target.Kind, key, err))
			}
			if wrote {
				outcome = fedmetrics.OutcomeWritten
			}
		}
		if len(errs) > 0 {
			return p.failed(ctx, key, errors.Join(errs...))
		}
		return federation.Result{}, outcome, nil
	})
}

// failed is the end of a pass that failed with err. A delete the gate refused is no error
// to retry with backoff: it is a Warning on the native object, naming the object, the
// invariant and the host, and the pass comes back after gate.RecheckAfter.
func (p *Propagator) failed(ctx context.Context, key federation.Key, err error) (federation.Result, string, error) {
	var r *gate.Refusal
	if !gate.Refused(err) || !errors.As(err, &r) {
		return federation.Result{}, fedmetrics.OutcomeError, err
	}
	for _, t := range p.types {
		if native, gerr := get(ctx, p.host, t.TargetGVR(), key); gerr == nil && native != nil {
			p.warnOnce(ctx, native, "refused/"+r.Object(), string(native.GetUID()), gate.ReasonRefused, r.Error())
		}
	}
	return federation.Result{RequeueAfter: gate.RecheckAfter}, fedmetrics.OutcomeError, nil
}

// policies reads the PropagationPolicies of namespace and every ClusterPropagationPolicy
// ([decodeCache.list]).
func (p *Propagator) policies(ctx context.Context, r federation.Reader, namespace string) ([]Policy, error) {
	return p.decoded.list(ctx, r, namespace)
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

// maxRounds bounds the calls of DecideWrites in one pass over one object. A pass takes five
// at most (a rollback, the policy annotation, the generated object, a live read of the
// preference, the rest); more means the host answers a write with something else than what
// was written.
const maxRounds = 10

// reader is what a pass reads through; live says it is the host's API server.
type reader struct {
	federation.Reader
	live bool
}

// reconcileType is the pass for one type: read the native object, its Federated<Kind> and
// preference; [DecideWrites], carry out, until nothing is left. wrote reports a write to
// the host.
func (p *Propagator) reconcileType(ctx context.Context, r reader, t federation.TypeConfig, key federation.Key, policies []Policy) (wrote bool, err error) {
	in := Input{Type: t, Policies: policies, ControlPlaneNamespace: p.opts.ControlPlaneNamespace}
	if in.Native, err = get(ctx, r, t.TargetGVR(), key); err != nil {
		return false, err
	}
	if in.Federated, err = get(ctx, r, t.FederatedGVR(), key); err != nil {
		return false, err
	}
	if err = p.readPreference(ctx, r, Cached, key, &in); err != nil {
		return false, err
	}
	for range maxRounds {
		w, err := DecideWrites(in)
		if err != nil {
			return wrote, err
		}
		p.warn(ctx, in.Native, w)
		if w.Read != NotRead {
			if err := p.readPreference(ctx, r, w.Read, key, &in); err != nil {
				return wrote, err
			}
			continue
		}
		done, err := p.carryOut(ctx, &in, w.Writes)
		wrote = wrote || done
		if err != nil || !w.Again {
			return wrote, err
		}
	}
	return wrote, fmt.Errorf("the writes did not settle in %d rounds: the host answers them with something else", maxRounds)
}

// warn records w's warnings on native, each once per change, and forgets those settled.
func (p *Propagator) warn(ctx context.Context, native *unstructured.Unstructured, w Writes) {
	for _, k := range w.Settled {
		p.forget(k)
	}
	for _, x := range w.Warnings {
		p.warnOnce(ctx, native, x.Key, x.Version, x.Reason, x.Message)
	}
}

// readPreference reads the preference of key as asked: from r, or from the host's API
// server for a Live read.
func (p *Propagator) readPreference(ctx context.Context, r reader, read Read, key federation.Key, in *Input) error {
	from := r.Reader
	if read == Live || r.live {
		from, read = p.host, Live
	}
	rsp, err := get(ctx, from, federation.ReplicaSchedulingPreferenceGVR, key)
	if err != nil {
		return err
	}
	in.Preference, in.Read = rsp, read
	return nil
}

// carryOut sends writes in order, each answer replacing its object in in, and records each
// write's event on the answer. It stops at the first error. wrote reports a write sent.
func (p *Propagator) carryOut(ctx context.Context, in *Input, writes []Write) (wrote bool, err error) {
	for _, w := range writes {
		out, err := p.write(ctx, *in, w)
		if err != nil {
			return wrote, err
		}
		wrote = true
		switch w.Target {
		case TargetNative:
			in.Native = out
		case TargetFederated:
			in.Federated = out
		case TargetPreference:
			in.Preference = out
		}
		if w.Event != nil && out != nil {
			p.event(ctx, out, w.Event.Type, w.Event.Reason, w.Event.Message)
		}
	}
	return wrote, nil
}

// write sends one write and returns the host's answer (nil for a delete).
func (p *Propagator) write(ctx context.Context, in Input, w Write) (*unstructured.Unstructured, error) {
	gvr, kind, held := federation.ReplicaSchedulingPreferenceGVR, federation.ReplicaSchedulingPreferenceGVK.Kind, in.Preference
	switch w.Target {
	case TargetNative:
		gvr, kind, held = in.Type.TargetGVR(), in.Type.Target.Kind, in.Native
	case TargetFederated:
		gvr, kind, held = in.Type.FederatedGVR(), in.Type.Federated.Kind, in.Federated
	}
	if w.Object != nil {
		held = w.Object
	}
	var out *unstructured.Unstructured
	var err error
	switch w.Verb {
	case Create:
		out, err = p.host.Create(ctx, gvr, w.Object)
	case Update:
		out, err = p.host.Update(ctx, gvr, w.Object)
	case UpdateStatus:
		out, err = p.host.UpdateStatus(ctx, gvr, w.Object)
	case Patch:
		out, err = p.patch(ctx, gvr, held, w.Patch)
	case Delete:
		err = p.delete(ctx, gvr, held, w.Preconditions)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s %s/%s: %w", w.Verb, kind, held.GetNamespace(), held.GetName(), err)
	}
	return out, nil
}

// patch sends the merge patch to held, locked on the resourceVersion held: the loop patches
// the user's object (its role may patch native objects, never update them), and a change
// made since the read is a Conflict, not overwritten.
func (p *Propagator) patch(ctx context.Context, gvr schema.GroupVersionResource, held *unstructured.Unstructured, patch map[string]any) (*unstructured.Unstructured, error) {
	locked := maps.Clone(patch)
	meta, _ := patch["metadata"].(map[string]any)
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = held.GetResourceVersion()
	locked["metadata"] = meta
	data, err := json.Marshal(locked)
	if err != nil {
		return nil, err
	}
	return p.host.Patch(ctx, gvr, held.GetNamespace(), held.GetName(), types.MergePatchType, data)
}

// delete deletes held with pre; one already gone is no error.
func (p *Propagator) delete(ctx context.Context, gvr schema.GroupVersionResource, held *unstructured.Unstructured, pre metav1.Preconditions) error {
	opts := metav1.DeleteOptions{}
	if pre.UID != nil || pre.ResourceVersion != nil {
		opts.Preconditions = &pre
	}
	err := p.opts.Gate.Delete(ctx, p.host, gate.Write{
		Verb: gate.Delete, Resource: gvr, Object: held,
		Evidence: gate.Evidence{Mark: gate.Mark{Label: federation.GeneratedByLabel, Value: federation.GeneratedByPropagation}},
	}, opts)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
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
