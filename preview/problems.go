package preview

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/sync/plan"
)

// problems collects an object's problems, each once: the scheduler and validation report
// an invalid placement alike.
type problems struct{ list []Problem }

func (ps *problems) add(p ...Problem) {
	for _, x := range p {
		if !slices.Contains(ps.list, x) {
			ps.list = append(ps.list, x)
		}
	}
}

// addError adds what a decision function returned: each field error of a validation error
// (naming the object at fault, which may be the preference), or the error itself. An
// unsatisfiable spread is a warning: the loop places the best effort.
func (ps *problems) addError(what string, err error) {
	var inv *federation.InvalidError
	switch {
	case err == nil:
	case errors.As(err, &inv):
		for _, e := range inv.Errs {
			ps.add(Problem{Severity: Error, Object: inv.Kind + " " + inv.Key.String(), Field: e.Field, Message: fieldMessage(e)})
		}
	case errors.Is(err, placement.ErrUnsatisfiable):
		ps.add(Problem{Severity: Warning, Object: what, Field: "spec.placement.spreadConstraints", Message: err.Error() + "; the best effort is placed"})
	default:
		ps.add(Problem{Severity: Error, Object: what, Message: err.Error()})
	}
}

// fieldMessage is a field error without its path (the Problem has it).
func fieldMessage(e *field.Error) string {
	return strings.TrimPrefix(e.Error(), e.Field+": ")
}

// renderProblems are override.Validate's render failures, one Problem per cluster: sync
// would report RenderFailed for each.
func renderProblems(failures []override.RenderFailure, what string) []Problem {
	var out []Problem
	for _, f := range failures {
		for _, c := range f.Clusters {
			out = append(out, Problem{Severity: Error, Object: what, Field: f.Field.String(), Cluster: c, Message: f.Detail})
		}
	}
	return out
}

// overriddenReplicas warns where an override sets the replicas the preference scheduled:
// the member then runs another count than the plan says, and the total is not the
// preference's. Without a preference, per-cluster replica overrides are the way to vary
// counts, and nothing is said. The field is the override that sets the count last
// (override.ReplicasField).
func (r *run) overriddenReplicas(typ federation.TypeConfig, fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, rows []Cluster, what string) []Problem {
	if rsp == nil || !typ.Divisible() || fed.Spec.RetainReplicas {
		return nil
	}
	var out []Problem
	for _, row := range rows {
		if row.MemberReplicas == nil || row.Replicas == nil || *row.MemberReplicas == *row.Replicas {
			continue
		}
		got := *row.MemberReplicas
		p := Problem{Severity: Warning, Object: what, Field: "spec.overrides", Cluster: row.Name,
			Message: fmt.Sprintf("the member runs %d replicas, not the %d the ReplicaSchedulingPreference scheduled: an override replaces %s",
				got, *row.Replicas, override.Pointer(typ.ReplicasFields()...))}
		if f := override.ReplicasField(fed.Spec.Overrides, typ, row.Name, r.labels(row.Name)); f != nil {
			p.Field = f.String()
		}
		out = append(out, p)
	}
	return out
}

// labels returns the labels of the Cluster of that name (nil when there is none).
func (r *run) labels(name string) map[string]string {
	if i, ok := slices.BinarySearch(r.names, name); ok {
		return r.clusters[i].Labels
	}
	return nil
}

// memberProblems are what a member's API server would make of the member objects sync
// sends, from plan.Decide's changes, one Problem per cluster and field, in cluster name order:
// an error for each field of an InvalidMember change (Change.Invalid, from
// federation.ValidateMember: refused on every create), a warning for each field the
// member's type does not have (Change.Unknown, from federation.UnknownFields: dropped). The
// field is given as the federated object's (spec.template. and the member's path).
func memberProblems(names []string, changes map[string]plan.Change, what string) []Problem {
	var out []Problem
	for _, name := range names {
		ch, ok := changes[name]
		if !ok {
			continue
		}
		if ch.Reason == plan.ReasonInvalidMember {
			for _, e := range ch.Invalid {
				out = append(out, Problem{Severity: Error, Object: what, Field: "spec.template." + e.Field, Cluster: name,
					Message: fmt.Sprintf("the member's API server refuses the %s: %s", ch.Desired.GetKind(), e.Error())})
			}
		}
		for _, p := range ch.Unknown {
			out = append(out, Problem{Severity: Warning, Object: what, Field: "spec.template." + p, Cluster: name,
				Message: fmt.Sprintf("the member's API server drops it: %s %s has no such field", ch.Desired.GetAPIVersion(), ch.Desired.GetKind())})
		}
	}
	return out
}
