package preview

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
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

// overrideField returns the field path of the last raw operation among the override entries
// that apply to cluster c which matches, or "" when none does (the operation came from a
// typed overrider, or none matches).
func overrideField(overrides []federation.ClusterOverride, c *federation.Cluster, match func(federation.OverrideOp) bool) string {
	found := ""
	for i := range overrides {
		if applies, err := override.ForCluster(overrides[i:i+1], c.Name, c.Labels); err != nil || len(applies) == 0 {
			continue
		}
		for j, op := range overrides[i].ClusterOverrides {
			if match(op) {
				found = fmt.Sprintf("spec.overrides[%d].clusterOverrides[%d]", i, j)
			}
		}
	}
	return found
}

// overriddenReplicas warns where an override sets the replicas the preference scheduled:
// the member then runs another count than the plan says, and the total is not the
// preference's. Without a preference, per-cluster replica overrides are the way to vary
// counts, and nothing is said.
func overriddenReplicas(typ federation.TypeConfig, fed *federation.FederatedObject, rsp *federation.ReplicaSchedulingPreference, rows []Cluster, what string) []Problem {
	if rsp == nil || !typ.Divisible() || fed.Spec.RetainReplicas {
		return nil
	}
	pointer := "/" + strings.Join(typ.ReplicasFields(), "/")
	var out []Problem
	for _, row := range rows {
		if row.Manifest == nil || row.Replicas == nil {
			continue
		}
		got, ok, _ := unstructured.NestedInt64(row.Manifest.Object, typ.ReplicasFields()...)
		if !ok || got == *row.Replicas {
			continue
		}
		p := Problem{Severity: Warning, Object: what, Field: "spec.overrides", Cluster: row.Name,
			Message: fmt.Sprintf("the member runs %d replicas, not the %d the ReplicaSchedulingPreference scheduled: an override replaces %s", got, *row.Replicas, pointer)}
		for i := range fed.Spec.Overrides {
			if o := &fed.Spec.Overrides[i]; o.ClusterName == row.Name && o.Replicas != nil {
				p.Field = fmt.Sprintf("spec.overrides[%d].replicas", i)
			}
		}
		c := &federation.Cluster{}
		c.Name = row.Name
		if f := overrideField(fed.Spec.Overrides, c, func(op federation.OverrideOp) bool { return op.Path == pointer && op.Op != federation.OpTest }); f != "" {
			p.Field = f
		}
		out = append(out, p)
	}
	return out
}
