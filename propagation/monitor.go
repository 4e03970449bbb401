package propagation

import (
	"context"
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// policyKinds is the metrics' type label and part of the work queue's name.
const policyKinds = "PropagationPolicy+ClusterPropagationPolicy"

// PolicyMonitor is the loop that writes the policies' status: whether each is valid, whether
// its selectors can select anything the types federate, and the objects it shares with
// other policies ([PolicyStatus]), and a Warning event on a policy that is invalid. Its keys
// are policies: a ClusterPropagationPolicy's has no namespace. It writes nothing else; the
// [Propagator]s act on the same decisions ([Decide]). A control plane runs one for all its
// propagated types. A PolicyMonitor is safe for concurrent use.
type PolicyMonitor struct {
	base
}

// NewPolicyMonitor returns a PolicyMonitor of the policies over the native kinds of types
// (those the Propagators federate), reading and writing through host. Options.Namespace
// restricts it to the PropagationPolicies of one namespace (and to the objects there);
// Options.ControlPlaneNamespace is left out as the Propagator leaves it out. It starts
// nothing.
func NewPolicyMonitor(host federation.ClusterClient, types []federation.TypeConfig, opts Options) (*PolicyMonitor, error) {
	m := &PolicyMonitor{}
	if err := m.init(host, types, opts, policyKinds); err != nil {
		return nil, fmt.Errorf("propagation: NewPolicyMonitor: %w", err)
	}
	return m, nil
}

// policyGVR is the resource of a policy key: a PropagationPolicy when it has a namespace.
func policyGVR(key federation.Key) schema.GroupVersionResource {
	if key.Namespace == "" {
		return federation.ClusterPropagationPolicyGVR
	}
	return federation.PropagationPolicyGVR
}

// keyOfRef is the key of the policy a federation.PolicyAnnotation value names.
func keyOfRef(ref string) (federation.Key, bool) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" {
		return federation.Key{}, false
	}
	if ns == "cluster" {
		ns = ""
	}
	return federation.Key{Namespace: ns, Name: name}, true
}

// Reconcile is one pass over the policy key (a ClusterPropagationPolicy when key has no
// namespace): it decodes and validates it, decides every native object of its scope and
// kinds as the Propagator does, and writes the policy's status when it changed. An invalid
// policy gets a Warning event, once per generation and error.
func (m *PolicyMonitor) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return m.reconcileFrom(ctx, m.host, key)
}

func (m *PolicyMonitor) reconcileFrom(ctx context.Context, r federation.Reader, key federation.Key) (federation.Result, error) {
	pass := loop.Pass{Loop: fedmetrics.LoopPropagation, Type: policyKinds, KeyName: "policy", Clock: m.opts.Clock, Logger: m.opts.Logger, Observe: m.metrics.Observe}
	return pass.Run(ctx, key, func(ctx context.Context) (federation.Result, string, error) {
		gvr := policyGVR(key)
		u, err := get(ctx, r, gvr, key)
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, err
		}
		if u == nil || u.GetDeletionTimestamp() != nil {
			return federation.Result{}, fedmetrics.OutcomeGone, nil
		}
		pol := m.decoded.decode(u)
		what := "policy/" + pol.Ref()
		var decisions []ObjectDecision
		if pol.Err != nil {
			m.warnOnce(ctx, u, what, fmt.Sprint(u.GetGeneration()), EventInvalidPolicy,
				pol.Err.Error()+"; it selects nothing new, and what it federates keeps its last valid spec")
		} else {
			m.forget(what)
			if decisions, err = m.decisions(ctx, r, pol); err != nil {
				return federation.Result{}, fedmetrics.OutcomeError, err
			}
		}
		var current federation.PolicyStatus
		if st, ok := u.Object["status"].(map[string]any); ok {
			// A status that does not decode is rewritten whole.
			_ = runtime.DefaultUnstructuredConverter.FromUnstructured(st, &current)
		}
		next, changed := PolicyStatus(pol, u.GetGeneration(), m.types, decisions, current, m.opts.Clock.Now())
		if !changed {
			return federation.Result{}, fedmetrics.OutcomeUnchanged, nil
		}
		st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&next)
		if err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("propagation: encode the status of %s: %w", pol.Ref(), err)
		}
		n := u.DeepCopy()
		n.Object["status"] = st
		if _, err := m.host.UpdateStatus(ctx, gvr, n); err != nil {
			return federation.Result{}, fedmetrics.OutcomeError, fmt.Errorf("propagation: update the status of %s %s: %w", u.GetKind(), pol.Ref(), err)
		}
		return federation.Result{}, fedmetrics.OutcomeWritten, nil
	})
}

// policies reads the policies that may select an object of namespace ("": any): its
// PropagationPolicies (every one of Options.Namespace for "") and every
// ClusterPropagationPolicy.
func (m *PolicyMonitor) policies(ctx context.Context, r federation.Reader, namespace string) ([]Policy, error) {
	if namespace == "" {
		namespace = m.opts.Namespace
	}
	return m.decoded.list(ctx, r, namespace)
}

// decisions decides every native object of pol's scope (its namespace, or every one) and of
// the types its selectors name, and returns those pol selects or federates.
func (m *PolicyMonitor) decisions(ctx context.Context, r federation.Reader, pol Policy) ([]ObjectDecision, error) {
	policies, err := m.policies(ctx, r, pol.Namespace)
	if err != nil {
		return nil, err
	}
	scope := pol.Namespace
	if scope == "" {
		scope = m.opts.Namespace
	}
	var out []ObjectDecision
	for _, t := range m.types {
		if !names(pol, t) {
			continue
		}
		natives, err := r.List(ctx, t.TargetGVR(), scope, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("propagation: list %s: %w", t.Target.Kind, err)
		}
		feds, err := r.List(ctx, t.FederatedGVR(), scope, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("propagation: list %s: %w", t.Federated.Kind, err)
		}
		byKey := make(map[federation.Key]*unstructured.Unstructured, len(feds.Items))
		for i := range feds.Items {
			byKey[federation.Key{Namespace: feds.Items[i].GetNamespace(), Name: feds.Items[i].GetName()}] = &feds.Items[i]
		}
		for i := range natives.Items {
			native := &natives.Items[i]
			fed := byKey[federation.Key{Namespace: native.GetNamespace(), Name: native.GetName()}]
			if d, ok := m.decide(t, native, fed, pol, policies); ok {
				out = append(out, ObjectDecision{Kind: t.Target.Kind, Namespace: native.GetNamespace(), Name: native.GetName(), Decision: d})
			}
		}
	}
	return out, nil
}

// decide decides native (whose Federated<Kind> is fed, nil when none) as the Propagator
// does, when pol selects it or federates it.
func (m *PolicyMonitor) decide(t federation.TypeConfig, native, fed *unstructured.Unstructured, pol Policy, policies []Policy) (Decision, bool) {
	if fed != nil && !Generated(fed) {
		return Decision{}, false // federated by hand: no policy has it
	}
	native, d, ok := choose(Input{Type: t, Native: native, Federated: fed, Policies: policies, ControlPlaneNamespace: m.opts.ControlPlaneNamespace})
	if !ok {
		return Decision{}, false
	}
	if _, ok := match(native, pol); !ok && holder(fed) != pol.Ref() {
		return Decision{}, false
	}
	return d, true
}

// names reports whether a selector of pol names t's target kind (whatever its version).
func names(pol Policy, t federation.TypeConfig) bool {
	for _, rs := range pol.Spec.ResourceSelectors {
		if rs.Kind == t.Target.Kind {
			return true
		}
	}
	return false
}

// Run reports until ctx is done. It watches the policies (a change of spec reconciles every
// policy of its scope: ranks are relative; its own status writes do not), the native objects of its types and their
// Federated<Kind> (a change of labels, policy annotation or deletion reconciles the policies
// that select the object or federate it).
// Its passes read from the informer caches; status writes go to the host. Run returns an
// error when its caches do not sync within Options.CacheSyncTimeout, else nil once every
// goroutine it started has exited.
func (m *PolicyMonitor) Run(ctx context.Context) error {
	var l *loop.Loop
	l, err := loop.New(m.host, m.sources(&l), loop.Options{
		Name:             "propagation/policies",
		Workers:          m.opts.Workers,
		Clock:            m.opts.Clock,
		Logger:           m.opts.Logger,
		CacheSyncTimeout: m.opts.CacheSyncTimeout,
		Shard:            m.opts.Shard,
		Registerer:       m.opts.Registerer,
		Cache:            m.opts.Cache,
	})
	if err == nil {
		cached := l.Reader()
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return m.reconcileFrom(ctx, cached, key)
		}))
	}
	if err != nil {
		return fmt.Errorf("propagation: %w", err)
	}
	return nil
}

// Watches returns the host resources Run watches: the policies, and the native objects of its
// types and their Federated<Kind> (in Options.Namespace).
func (m *PolicyMonitor) Watches() []federation.Watch {
	var l *loop.Loop
	return loop.Watches(m.sources(&l))
}

// sources are what Run watches, and how a change maps to keys; l is the loop once Run made
// it (the keys are read from its cache).
func (m *PolicyMonitor) sources(l **loop.Loop) []loop.Source {
	keys := func(namespace string) []federation.Key {
		pols, err := m.policies(context.Background(), (*l).Reader(), namespace)
		if err != nil {
			return nil
		}
		out := make([]federation.Key, 0, len(pols))
		for _, p := range pols {
			out = append(out, federation.Key{Namespace: p.Namespace, Name: p.Name})
		}
		return out
	}
	sources := []loop.Source{
		{GVR: federation.PropagationPolicyGVR, Namespace: m.opts.Namespace, Changed: specChanged,
			Keys:    func(u *unstructured.Unstructured) []federation.Key { return keys(u.GetNamespace()) },
			Deleted: m.decoded.forget},
		{GVR: federation.ClusterPropagationPolicyGVR, Changed: specChanged,
			Keys:    func(*unstructured.Unstructured) []federation.Key { return keys("") },
			Deleted: m.decoded.forget},
	}
	for _, t := range m.types {
		t := t
		sources = append(sources,
			loop.Source{GVR: t.TargetGVR(), Namespace: m.opts.Namespace, Changed: selectionChanged,
				Keys: func(u *unstructured.Unstructured) []federation.Key { return m.selecting((*l).Reader(), t, u) }},
			loop.Source{GVR: t.FederatedGVR(), Namespace: m.opts.Namespace, Changed: selectionChanged,
				Keys: func(u *unstructured.Unstructured) []federation.Key {
					out := m.refKeys(u)
					if native, err := get(context.Background(), (*l).Reader(), t.TargetGVR(), federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}); err == nil && native != nil {
						out = append(out, m.selecting((*l).Reader(), t, native)...)
					}
					return out
				}})
	}
	return sources
}

// selecting returns the keys of the policies that select native, and of the one its
// federation.PolicyAnnotation names (which may have stopped selecting it).
func (m *PolicyMonitor) selecting(r federation.Reader, t federation.TypeConfig, native *unstructured.Unstructured) []federation.Key {
	out := m.refKeys(native)
	pols, err := m.policies(context.Background(), r, native.GetNamespace())
	if err != nil {
		return out
	}
	u := native
	if u.GetAPIVersion() == "" {
		u = native.DeepCopy()
		u.SetAPIVersion(t.Target.GroupVersion().String())
		u.SetKind(t.Target.Kind)
	}
	for _, p := range pols {
		if _, ok := match(u, p); ok {
			out = append(out, federation.Key{Namespace: p.Namespace, Name: p.Name})
		}
	}
	return out
}

// refKeys is the key of the policy u's federation.PolicyAnnotation names, if any.
func (m *PolicyMonitor) refKeys(u *unstructured.Unstructured) []federation.Key {
	if k, ok := keyOfRef(u.GetAnnotations()[federation.PolicyAnnotation]); ok {
		return []federation.Key{k}
	}
	return nil
}

// selectionChanged reports whether an update of a native object or a Federated<Kind>
// matters to the policies' status: its labels (what selectors see, the generated label),
// the policy it names, its deletion. Spec and status changes do not: the Propagator and the
// Collector write them all the time.
func selectionChanged(old, new *unstructured.Unstructured) bool {
	return !maps.Equal(old.GetLabels(), new.GetLabels()) ||
		old.GetAnnotations()[federation.PolicyAnnotation] != new.GetAnnotations()[federation.PolicyAnnotation] ||
		(old.GetDeletionTimestamp() == nil) != (new.GetDeletionTimestamp() == nil)
}
