package preview

import (
	"fmt"
	"slices"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// workload records an object with spec.propagateDependencies for the dependencies preview,
// as the loop reads it (dependencies.WorkloadOf, with the loop's extractor for its kind): its
// clusters, from the schedule the scheduler would write (fed's status.schedule by now) and
// its status.clusters, and what its pods refer to in each, after overrides. A template the
// extractor cannot read is a problem.
func (r *run) workload(typ federation.TypeConfig, fed *federation.FederatedObject, what string) []Problem {
	if !fed.Spec.PropagateDependencies {
		return nil
	}
	extract := dependencies.ExtractorFor(dependencies.Builtin(), typ)
	if extract == nil {
		return []Problem{{Severity: Warning, Object: what, Field: "spec.propagateDependencies",
			Message: "the dependencies loop has no extractor for " + typ.Target.Kind + ": nothing follows it (register one in dependencies.Options.Extractors, or give the kind dependency rules)"}}
	}
	w, err := dependencies.WorkloadOf(typ, extract, fed, r.clusters)
	if err != nil {
		return []Problem{{Severity: Error, Object: what, Field: "spec.template", Message: err.Error()}}
	}
	r.refs[r.index] = w.Referenced()
	if r.refs[r.index] == nil {
		r.refs[r.index] = []dependencies.Reference{}
	}
	r.workloads[fed.Namespace] = append(r.workloads[fed.Namespace], w)
	return nil
}

// dependencies fills each workload's Dependencies from the union over the input's workloads
// of its namespace. It returns, by object index, the clusters the user's federated
// dependencies of the input must gain.
func (r *run) dependencies(rep *Report) map[int][]string {
	gain := map[int][]string{}
	for i, refs := range r.refs {
		o := &rep.Objects[i]
		union := dependencies.Union(r.workloads[o.Namespace])
		for _, ref := range refs {
			for _, d := range union {
				if d.Reference.Kind != ref.Kind || d.Name != ref.Name {
					continue
				}
				dep := Dependency{Kind: d.Kind, Name: d.Name, Optional: d.Optional, Clusters: d.Clusters, Federated: r.federated(o.Namespace, d.Reference)}
				if dep.Clusters == nil {
					dep.Clusters = []string{}
				}
				if why := r.refused(o.Namespace, d.Reference); why != "" {
					dep.Federated, dep.Clusters = "refused", []string{}
					o.Problems = append(o.Problems, Problem{Severity: Warning, Object: o.Kind + " " + o.Namespace + "/" + o.Name, Field: "spec.template",
						Message: d.String() + " never follows a workload: " + why + " (DependenciesResolved=False, DependencyRefused)"})
				}
				if dep.Federated == "missing" {
					dep.Clusters = []string{}
					sev := Warning
					msg := d.String() + " is not in the input: the workload propagates without it (DependenciesResolved=False, DependencyMissing)"
					if d.Optional {
						msg = d.String() + " (optional) is not in the input: nothing follows"
					}
					o.Problems = append(o.Problems, Problem{Severity: sev, Object: o.Kind + " " + o.Namespace + "/" + o.Name, Field: "spec.template", Message: msg})
				}
				if dep.Federated == "yours" && len(d.Clusters) > 0 {
					at := r.objectIndex("Federated"+d.Kind, o.Namespace, d.Name)
					gain[at] = d.Clusters
					o.Problems = append(o.Problems, r.notPlaceable(o, d.Reference, at)...)
				}
				o.Dependencies = append(o.Dependencies, dep)
			}
		}
	}
	delete(gain, -1)
	return gain
}

// notPlaceable is a problem for each cluster where o's pods refer to ref, the user's federated
// object at index at of the input, and its own placement explicitly refuses it
// (placement.Refused, as the loop reports with DependencyNotPlaceable).
func (r *run) notPlaceable(o *Object, ref dependencies.Reference, at int) []Problem {
	if at < 0 {
		return nil
	}
	var need []string
	for _, w := range r.workloads[o.Namespace] {
		if w.Kind != o.Kind || w.Name != o.Name {
			continue
		}
		for _, c := range w.Clusters {
			if slices.ContainsFunc(w.In(c), func(x dependencies.Reference) bool { return x.Kind == ref.Kind && x.Name == ref.Name }) {
				need = append(need, c)
			}
		}
	}
	refused := placement.Refused(placement.Input{Placement: r.in.Objects[at].Spec.Placement, Clusters: r.clusters, Now: r.in.Now}, need)
	var out []Problem
	for _, c := range need {
		if x, ok := refused[c]; ok {
			out = append(out, Problem{Severity: Warning, Object: o.Kind + " " + o.Namespace + "/" + o.Name, Field: "spec.template",
				Message: fmt.Sprintf("%s is not placed in %s, where the workload runs: its own placement refuses it (%s: %s); an explicit exclusion wins (DependenciesResolved=False, DependencyNotPlaceable)", ref, c, x.Rule, x.Detail)})
		}
	}
	return out
}

// objectIndex is the index in the input of the federated object, or -1.
func (r *run) objectIndex(kind, ns, name string) int {
	for i := range r.in.Objects {
		if o := &r.in.Objects[i]; o.Kind == kind && o.Namespace == ns && o.Name == name {
			return i
		}
	}
	return -1
}

// refused says why the host Secret ref of namespace ns in the input never follows a workload
// (federation.Credentials, with the control plane's default namespace, as the loop's
// default), or "".
func (r *run) refused(ns string, ref dependencies.Reference) string {
	if ref.Kind != dependencies.KindSecret || r.objects["Federated"+ref.Kind+"/"+ns+"/"+ref.Name] {
		return ""
	}
	if u := find(r.in.Other, "v1", ref.Kind, ns, ref.Name); u != nil {
		return federation.Credentials(u, federation.DefaultNamespace)
	}
	return ""
}

// federated says how the dependency ref of namespace ns would follow: the user's federated
// object of the input, else the input's host object, else missing.
func (r *run) federated(ns string, ref dependencies.Reference) string {
	if r.objects["Federated"+ref.Kind+"/"+ns+"/"+ref.Name] {
		return "yours"
	}
	if find(r.in.Other, "v1", ref.Kind, ns, ref.Name) != nil {
		return "generated"
	}
	return "missing"
}
