package dependencies

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	fedcond "github.com/fedkit/fedkit/internal/condition"
)

// condition is workload i's DependenciesResolved change: False when its template cannot be
// read or a dependency is missing, refused or excluded where it runs ([decider.problems]:
// the first decides the reason, the message says them all), True otherwise; removed from a
// workload that no longer propagates its dependencies. An event marks a change of status or
// reason. ok is false when nothing changes.
func (x *decider) condition(i int) (ConditionChange, bool) {
	obj := x.in.Workloads[i].Object
	prev := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionDependenciesResolved)
	if !obj.Spec.PropagateDependencies {
		return ConditionChange{Workload: i}, prev != nil
	}
	cond := metav1.Condition{Type: federation.ConditionDependenciesResolved, Status: metav1.ConditionTrue, Reason: ReasonResolved, ObservedGeneration: obj.Generation}
	refs := x.refs[i].Workload.Referenced()
	switch problems := x.problems(x.refs[i]); {
	case len(problems) > 0:
		msgs := make([]string, len(problems))
		for j, pr := range problems {
			msgs[j] = pr.message
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, problems[0].reason, strings.Join(msgs, "; ")
	case len(refs) == 0:
		cond.Message = "the template refers to no ConfigMap, Secret, ServiceAccount or PersistentVolumeClaim"
	default:
		cond.Message = "following the workload: " + strings.Join(named(refs, Reference.String), ", ")
	}
	cond.Message = fedcond.Truncate(cond.Message, fedcond.MaxMessage)
	if _, changed := fedcond.Set(obj.Status.Conditions, cond, x.in.Now); !changed {
		return ConditionChange{}, false
	}
	c := ConditionChange{Workload: i, Condition: &cond}
	switch {
	case cond.Status == metav1.ConditionFalse && (prev == nil || prev.Status != cond.Status || prev.Reason != cond.Reason):
		c.Event = &Event{Type: federation.EventTypeWarning, Reason: cond.Reason, Message: cond.Message}
	case cond.Status == metav1.ConditionTrue && prev != nil && prev.Status == metav1.ConditionFalse:
		c.Event = &Event{Type: federation.EventTypeNormal, Reason: cond.Reason, Message: cond.Message}
	}
	return c, true
}

// problem is one thing wrong with a workload's dependencies: the condition's reason and what
// to say of it.
type problem struct{ reason, message string }

// problems are what is wrong with the dependencies of a workload that refers to r, the one
// that decides the condition's reason first: a namespace nothing is federated from (alone),
// a template that cannot be read, then dependencies missing, refused (credentials), and
// excluded by their own placement from clusters it runs in. Each names the dependencies,
// and the clusters where that matters.
func (x *decider) problems(r References) []problem {
	if x.reserved != "" {
		return []problem{{ReasonNamespaceRefused, x.reserved + ", so no dependency follows a workload there"}}
	}
	if r.Err != nil {
		return []problem{{ReasonInvalidTemplate, r.Err.Error()}}
	}
	refs := r.Workload.Referenced()
	var out []problem
	if names := named(refs, func(ref Reference) string {
		if x.missing[ref.String()] {
			return ref.String()
		}
		return ""
	}); len(names) > 0 {
		out = append(out, problem{ReasonDependencyMissing, fmt.Sprintf("not found in namespace %s: %s; the workload propagates without it, and it follows once it exists",
			x.in.Namespace, strings.Join(names, ", "))})
	}
	if names := named(refs, func(ref Reference) string {
		if why := x.refused[ref.String()]; why != "" {
			return ref.String() + " (" + why + ")"
		}
		return ""
	}); len(names) > 0 {
		out = append(out, problem{ReasonDependencyRefused, "credentials never follow a workload: " + strings.Join(names, ", ")})
	}
	if names := x.excludedFor(r.Workload); len(names) > 0 {
		out = append(out, problem{ReasonDependencyNotPlaceable, "an explicit exclusion wins, so not placed where the workload runs: " + strings.Join(names, "; ")})
	}
	return out
}

// named applies say to each of refs, in order, and returns what it says ("" is nothing).
func named(refs []Reference, say func(Reference) string) []string {
	var out []string
	for _, r := range refs {
		if s := say(r); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// excludedFor names, for each dependency of wl that its own placement keeps out of a cluster
// whose pods refer to it, the cluster and why: "ConfigMap/a in us (ExcludeClusters: ...)".
func (x *decider) excludedFor(wl Workload) []string {
	if len(x.excluded) == 0 || wl.Deleting {
		return nil
	}
	var out []string
	for _, c := range wl.Clusters {
		for _, r := range wl.In(c) {
			if e, ok := x.excluded[r.String()][c]; ok {
				out = append(out, fmt.Sprintf("%s in %s (%s: %s)", r, c, e.Rule, e.Detail))
			}
		}
	}
	slices.Sort(out)
	return out
}
