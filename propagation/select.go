package propagation

import (
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/labelselector"
)

// Policy is a PropagationPolicy (Namespace set) or a ClusterPropagationPolicy (Namespace
// empty), as the pure functions see it.
type Policy struct {
	Namespace string
	Name      string
	Spec      federation.PropagationSpec
	// Err is why the policy is invalid; nil for a valid one. An invalid policy selects
	// nothing ([Matches] passes it over), but what it federates keeps its last valid
	// decision ([Decide]).
	Err error
}

// Cluster reports whether p is a ClusterPropagationPolicy.
func (p Policy) Cluster() bool { return p.Namespace == "" }

// Ref is the value of federation.PolicyAnnotation naming p: "<namespace>/<name>", or
// "cluster/<name>" for a ClusterPropagationPolicy.
func (p Policy) Ref() string {
	if p.Cluster() {
		return "cluster/" + p.Name
	}
	return p.Namespace + "/" + p.Name
}

// Specificity is how precisely a selector picked an object.
type Specificity int

const (
	// ByKind: the selector names the kind only (and perhaps a namespace).
	ByKind Specificity = iota
	// ByLabels: a label selector matched.
	ByLabels
	// ByName: the selector names the object.
	ByName
)

func (s Specificity) String() string {
	switch s {
	case ByName:
		return "by name"
	case ByLabels:
		return "by labels"
	}
	return "by kind"
}

// Match is a policy that selects an object, with its most specific selector that does.
type Match struct {
	Policy      Policy
	Specificity Specificity
}

// Matches returns the policies that select obj, best first: higher priority, then a
// PropagationPolicy before a ClusterPropagationPolicy, then the more specific selector
// (name, labels, kind only), then name ascending. The first one wins. A namespaced policy
// selects only in its own namespace.
func Matches(obj *unstructured.Unstructured, policies []Policy) []Match {
	var out []Match
	for _, p := range policies {
		if p.Err != nil {
			continue
		}
		if m, ok := match(obj, p); ok {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return Better(out[i], out[j]) })
	return out
}

// Decision is which policy federates an object, and which others select it.
type Decision struct {
	// Winner federates the object. Its Policy.Name is empty when no policy does.
	Winner Match
	// Frozen: the policy that federates the object (its Federated<Kind>'s
	// federation.PolicyAnnotation) is invalid. Its generated object stays as it is: an
	// invalid policy never undoes its last valid decision.
	Frozen bool
	// Losers are the other valid policies that select the object, best first.
	Losers []Match
}

// Decide returns which of policies federates obj, given holder, the Ref of the policy that
// federates it now ("" when none). A policy never takes over an object another one
// federates unless its spec.preemption is Always and [CanPreempt] says it may, as in
// Karmada: the holder keeps the object while it still selects it. When nobody holds it, or
// the holder no longer selects it, the best match ([Matches]) wins, unless one that may
// preempt it does. A holder that is invalid (Err set) keeps the object whatever the others
// say (Frozen).
func Decide(obj *unstructured.Unstructured, policies []Policy, holder string) Decision {
	for _, p := range policies {
		if p.Err != nil && holder != "" && p.Ref() == holder {
			return Decision{Winner: Match{Policy: p}, Frozen: true, Losers: Matches(obj, policies)}
		}
	}
	matches := Matches(obj, policies)
	if len(matches) == 0 {
		return Decision{}
	}
	win := slices.IndexFunc(matches, func(m Match) bool { return m.Policy.Ref() == holder })
	if win < 0 {
		win = 0 // nobody holds it, or the holder no longer selects it: the best would
	}
	if i := slices.IndexFunc(matches, func(m Match) bool {
		return m.Policy.Spec.Preemption == federation.PreemptAlways && CanPreempt(m.Policy, matches[win].Policy)
	}); i >= 0 {
		win = i // the best of those that preempt it takes it over
	}
	d := Decision{Winner: matches[win]}
	d.Losers = append(append(d.Losers, matches[:win]...), matches[win+1:]...)
	return d
}

// CanPreempt reports whether p may take over an object holder federates when p's
// spec.preemption is Always, as Karmada has it: a PropagationPolicy may take it from any
// ClusterPropagationPolicy, and from a PropagationPolicy of lower priority; a
// ClusterPropagationPolicy only from a ClusterPropagationPolicy of lower priority, never from
// a PropagationPolicy (a team's policy is never taken over by a cluster-wide one).
func CanPreempt(p, holder Policy) bool {
	switch {
	case p.Cluster() && !holder.Cluster():
		return false
	case !p.Cluster() && holder.Cluster():
		return true
	}
	return p.Spec.Priority > holder.Spec.Priority
}

// LossReason is why loser does not federate an object winner does:
// federation.ReasonNotPreempting when loser could take it over with preemption Always
// ([CanPreempt]), federation.ReasonLowerPrecedence when winner ranks above it ([Better]),
// else federation.ReasonCannotPreempt (it ranks above the winner, which had the object
// first, and may not take it over).
func LossReason(winner, loser Match) string {
	switch {
	case winner.Policy.Err == nil && CanPreempt(loser.Policy, winner.Policy):
		return federation.ReasonNotPreempting
	case winner.Policy.Err == nil && Better(winner, loser):
		return federation.ReasonLowerPrecedence
	}
	return federation.ReasonCannotPreempt
}

// Better reports whether a takes precedence over b.
func Better(a, b Match) bool {
	if a.Policy.Spec.Priority != b.Policy.Spec.Priority {
		return a.Policy.Spec.Priority > b.Policy.Spec.Priority
	}
	if a.Policy.Cluster() != b.Policy.Cluster() {
		return !a.Policy.Cluster()
	}
	if a.Specificity != b.Specificity {
		return a.Specificity > b.Specificity
	}
	return a.Policy.Name < b.Policy.Name
}

// Lost says why loser lost to winner, in a phrase for events and previews.
func Lost(winner, loser Match) string {
	w, l := winner.Policy, loser.Policy
	switch {
	case w.Err != nil:
		return "the winner federated it first and is invalid: its last valid decision stays"
	case !Better(winner, loser) && CanPreempt(l, w):
		return "the winner federated it first, and this policy does not preempt (preemption Never)"
	case !Better(winner, loser):
		return "the winner federated it first, and this policy may not preempt it"
	case w.Spec.Priority != l.Spec.Priority:
		return fmt.Sprintf("priority %d is lower than %d", l.Spec.Priority, w.Spec.Priority)
	case w.Cluster() != l.Cluster():
		return "a ClusterPropagationPolicy loses to a PropagationPolicy of equal priority"
	case winner.Specificity != loser.Specificity:
		return fmt.Sprintf("its selector (%s) is less specific than the winner's (%s)", loser.Specificity, winner.Specificity)
	}
	return "equal rank: the winner's name comes first"
}

func match(obj *unstructured.Unstructured, p Policy) (Match, bool) {
	if !p.Cluster() && p.Namespace != obj.GetNamespace() {
		return Match{}, false
	}
	best, found := Match{Policy: p}, false
	for _, rs := range p.Spec.ResourceSelectors {
		s, ok := selects(rs, obj)
		if ok && (!found || s > best.Specificity) {
			best.Specificity, found = s, true
		}
	}
	return best, found
}

// selects reports whether rs picks obj, and how precisely. A label selector that does not
// parse selects nothing (validation reports it).
func selects(rs federation.ResourceSelector, obj *unstructured.Unstructured) (Specificity, bool) {
	if rs.APIVersion != obj.GetAPIVersion() || rs.Kind != obj.GetKind() {
		return 0, false
	}
	if rs.Namespace != "" && rs.Namespace != obj.GetNamespace() {
		return 0, false
	}
	switch {
	case rs.Name != "":
		return ByName, rs.Name == obj.GetName()
	case rs.LabelSelector != nil:
		sel, err := labelselector.Parse(rs.LabelSelector, nil)
		if err != nil {
			return 0, false
		}
		return ByLabels, sel.Matches(labels.Set(obj.GetLabels()))
	}
	return ByKind, true
}
