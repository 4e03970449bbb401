package propagation

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/condition"
)

// ObjectDecision is the [Decision] about one native object, as a policy's status reads it.
type ObjectDecision struct {
	Kind, Namespace, Name string
	Decision              Decision
}

// PolicyStatus returns the status of policy p at generation: Valid (with p.Err's fields and
// errors when it is invalid), Selectable ([Unselectable] over the kinds of types) and
// Conflict, from the decisions about the objects in p's scope: each object p and another
// policy select is a conflict naming the winner, the loser and why ([LossReason]). An
// invalid policy's status has Valid only: what it selects cannot be known. Conditions keep
// their lastTransitionTime while their status stays. changed reports whether the result
// differs from current.
func PolicyStatus(p Policy, generation int64, types []federation.TypeConfig, decisions []ObjectDecision, current federation.PolicyStatus, now time.Time) (federation.PolicyStatus, bool) {
	next := federation.PolicyStatus{ObservedGeneration: generation}
	conds := []metav1.Condition{validCondition(p)}
	if p.Err == nil {
		conds = append(conds, selectableCondition(Unselectable(p, types)))
		var cond metav1.Condition
		next.Conflicts, cond = conflicts(p, decisions)
		conds = append(conds, cond)
	}
	for _, c := range conds {
		c.ObservedGeneration = generation
		c.Message = condition.Truncate(c.Message, condition.MaxMessage)
		if prev := meta.FindStatusCondition(current.Conditions, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		}
		next.Conditions = append(next.Conditions, c)
	}
	return next, !equalStatus(current, next)
}

func validCondition(p Policy) metav1.Condition {
	if p.Err != nil {
		return metav1.Condition{Type: federation.ConditionValid, Status: metav1.ConditionFalse, Reason: federation.ReasonInvalidPolicy,
			Message: p.Err.Error() + "; it selects nothing new, and what it federates keeps its last valid spec"}
	}
	return metav1.Condition{Type: federation.ConditionValid, Status: metav1.ConditionTrue, Reason: federation.ReasonValidPolicy, Message: "the policy is valid"}
}

func selectableCondition(problems []string) metav1.Condition {
	if len(problems) > 0 {
		return metav1.Condition{Type: federation.ConditionSelectable, Status: metav1.ConditionFalse, Reason: federation.ReasonKindNotFederated,
			Message: strings.Join(problems, "; ")}
	}
	return metav1.Condition{Type: federation.ConditionSelectable, Status: metav1.ConditionTrue, Reason: federation.ReasonSelectable,
		Message: "every resource selector names a kind the control plane federates"}
}

// conflicts lists, sorted and bounded by federation.MaxPolicyConflicts, the objects p and
// another policy both select, and the Conflict condition that counts them all.
func conflicts(p Policy, decisions []ObjectDecision) ([]federation.PolicyConflict, metav1.Condition) {
	ref := p.Ref()
	var out []federation.PolicyConflict
	add := func(o ObjectDecision, winner, loser Match) {
		out = append(out, federation.PolicyConflict{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name,
			Winner: winner.Policy.Ref(), Loser: loser.Policy.Ref(), Reason: LossReason(winner, loser)})
	}
	for _, o := range decisions {
		d := o.Decision
		if d.Winner.Policy.Name == "" {
			continue
		}
		if d.Winner.Policy.Ref() == ref {
			for _, l := range d.Losers {
				add(o, d.Winner, l)
			}
			continue
		}
		if i := slices.IndexFunc(d.Losers, func(m Match) bool { return m.Policy.Ref() == ref }); i >= 0 {
			add(o, d.Winner, d.Losers[i])
		}
	}
	slices.SortFunc(out, func(a, b federation.PolicyConflict) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Loser, b.Loser))
	})
	if len(out) == 0 {
		return nil, metav1.Condition{Type: federation.ConditionConflict, Status: metav1.ConditionFalse, Reason: federation.ReasonNoConflict,
			Message: "no other policy selects what this one selects"}
	}
	cond := metav1.Condition{Type: federation.ConditionConflict, Status: metav1.ConditionTrue, Reason: federation.ReasonSelectedByOthers}
	var lines []string
	for _, c := range out {
		if c.Winner == ref {
			lines = append(lines, fmt.Sprintf("%s %s/%s: federated by this policy, also selected by %s (%s)", c.Kind, c.Namespace, c.Name, c.Loser, reasonPhrase(c.Reason)))
			continue
		}
		// A loss says more than a win: the first one gives the reason.
		if cond.Reason == federation.ReasonSelectedByOthers {
			cond.Reason = c.Reason
		}
		lines = append(lines, fmt.Sprintf("%s %s/%s: federated by %s, not by this policy (%s)", c.Kind, c.Namespace, c.Name, c.Winner, reasonPhrase(c.Reason)))
	}
	cond.Message = fmt.Sprintf("%d object(s) also selected by another policy: %s", len(out), strings.Join(lines, "; "))
	if len(out) > federation.MaxPolicyConflicts {
		out = out[:federation.MaxPolicyConflicts]
	}
	return out, cond
}

func reasonPhrase(reason string) string {
	switch reason {
	case federation.ReasonNotPreempting:
		return "the loser could take it over but does not preempt: preemption Never"
	case federation.ReasonCannotPreempt:
		return "the loser ranks higher but may not take it over: a ClusterPropagationPolicy never preempts a PropagationPolicy, and preemption needs a higher priority"
	}
	return "the winner ranks higher"
}

// Unselectable returns, for each resource selector of p that can select nothing the kinds
// of types federate, a line naming the selector and why: a kind no type has (with the
// type's kind it was perhaps meant to be), another version than the type's, or Secrets
// where the types leave them out (DefaultTypes does: they hold credentials).
func Unselectable(p Policy, types []federation.TypeConfig) []string {
	var out []string
	for i, rs := range p.Spec.ResourceSelectors {
		if why := unselectable(rs, types); why != "" {
			out = append(out, fmt.Sprintf("spec.resourceSelectors[%d]: %s %s %s", i, rs.APIVersion, rs.Kind, why))
		}
	}
	return out
}

func unselectable(rs federation.ResourceSelector, types []federation.TypeConfig) string {
	var kinds []string
	for _, t := range types {
		if t.Target.Kind == rs.Kind {
			if gv := t.Target.GroupVersion().String(); gv != rs.APIVersion {
				return fmt.Sprintf("is federated as %s only: use apiVersion %s", gv, gv)
			}
			return ""
		}
		kinds = append(kinds, t.Target.Kind)
	}
	if rs.Kind == federation.SecretType.Target.Kind && rs.APIVersion == "v1" {
		return "is left out: Secrets hold credentials, so the control plane does not federate them by default (an embedder who wants them runs the loop with federation.SecretType)"
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		if strings.EqualFold(k, rs.Kind) || strings.EqualFold(k+"s", rs.Kind) || distance(strings.ToLower(k), strings.ToLower(rs.Kind)) <= 2 {
			return fmt.Sprintf("is not a kind the control plane federates: did you mean %s?", k)
		}
	}
	return fmt.Sprintf("is not a kind the control plane federates (it federates %s)", strings.Join(kinds, ", "))
}

// distance is the Levenshtein distance between a and b, for kinds (short ASCII names).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev = cur
	}
	return prev[len(b)]
}

// equalStatus compares two statuses, conditions without their transition times only when
// the rest is equal (a condition set again at the same status keeps its time).
func equalStatus(a, b federation.PolicyStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || !slices.Equal(a.Conflicts, b.Conflicts) || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	return true
}
