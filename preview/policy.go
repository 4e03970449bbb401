package preview

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
)

// natives previews the propagation policies: for each native object of a type's target
// kind in Input.Other, the policy that wins and those that lost (propagation.DecideWrites,
// as the loop decides an object nobody federates yet), and the Federated<Kind> (and
// preference) generated for it. Invalid policies are problems and select nothing.
func (r *run) natives() ([]Native, []federation.FederatedObject, []Problem) {
	var policies []propagation.Policy
	var problems []Problem
	invalid := func(what string, errs field.ErrorList) bool {
		for _, e := range errs {
			problems = append(problems, Problem{Severity: Error, Object: what, Field: e.Field, Message: fieldMessage(e) + " (the policy selects nothing)"})
		}
		return len(errs) > 0
	}
	for i := range r.in.Policies {
		p := &r.in.Policies[i]
		if !invalid("PropagationPolicy "+p.Namespace+"/"+p.Name, federation.ValidatePropagationPolicy(p)) {
			policies = append(policies, propagation.Policy{Namespace: p.Namespace, Name: p.Name, Spec: p.Spec})
		}
	}
	for i := range r.in.ClusterPolicies {
		p := &r.in.ClusterPolicies[i]
		if !invalid("ClusterPropagationPolicy "+p.Name, federation.ValidateClusterPropagationPolicy(p)) {
			policies = append(policies, propagation.Policy{Name: p.Name, Spec: p.Spec})
		}
	}
	var natives []Native
	var generated []federation.FederatedObject
	for _, u := range r.in.Other {
		typ, ok := r.targetType(u.GetAPIVersion(), u.GetKind())
		if !ok || !propagation.Selectable(u) {
			continue
		}
		n := Native{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
		// The loop's own decision over an object nobody federates yet, with the control
		// plane's default namespace.
		w, err := propagation.DecideWrites(propagation.Input{Type: typ, Native: u, Policies: policies, Read: propagation.Cached,
			ControlPlaneNamespace: federation.DefaultNamespace})
		win := w.Policy.Winner
		if win.Policy.Name == "" {
			natives = append(natives, n)
			continue
		}
		n.Policy, n.Selected = win.Policy.Ref(), win.Specificity.String()
		for _, m := range w.Policy.Losers {
			n.Lost = append(n.Lost, LostPolicy{Policy: m.Policy.Ref(), Why: propagation.Lost(win, m)})
		}
		if err != nil {
			n.Problem = err.Error()
			natives = append(natives, n)
			continue
		}
		id := typ.Federated.Kind + "/" + u.GetNamespace() + "/" + u.GetName()
		if r.objects[id] {
			n.Problem = fmt.Sprintf("%s %s/%s is in the input, written by hand: it is left alone", typ.Federated.Kind, u.GetNamespace(), u.GetName())
			natives = append(natives, n)
			continue
		}
		fed, rsp, err := generate(typ, u, win.Policy)
		if err != nil {
			n.Problem = err.Error()
			natives = append(natives, n)
			continue
		}
		n.Generated = typ.Federated.Kind + " " + u.GetNamespace() + "/" + u.GetName()
		r.objects[id] = true
		generated = append(generated, *fed)
		if rsp != nil {
			r.in.Preferences = append(slices.Clip(r.in.Preferences), *rsp)
		}
		natives = append(natives, n)
	}
	return natives, generated, problems
}

// targetType is the namespaced type whose target is apiVersion and kind.
func (r *run) targetType(apiVersion, kind string) (federation.TypeConfig, bool) {
	for _, t := range r.types {
		if t.Namespaced && t.Target.GroupVersion().String() == apiVersion && t.Target.Kind == kind {
			return t, true
		}
	}
	return federation.TypeConfig{}, false
}

// generate is what package propagation writes for native under p: the Federated<Kind>
// and, for a policy with spec.scheduling, its ReplicaSchedulingPreference.
func generate(typ federation.TypeConfig, native *unstructured.Unstructured, p propagation.Policy) (*federation.FederatedObject, *federation.ReplicaSchedulingPreference, error) {
	u, err := propagation.Generate(typ, native, p)
	if err != nil {
		return nil, nil, err
	}
	fed, err := federation.FederatedObjectFromUnstructured(u)
	if err != nil {
		return nil, nil, err
	}
	ru, err := propagation.Preference(typ, native, u, p)
	if err != nil || ru == nil {
		return fed, nil, err
	}
	rsp, err := federation.ReplicaSchedulingPreferenceFromUnstructured(ru)
	if err != nil {
		return nil, nil, err
	}
	return fed, rsp, nil
}
