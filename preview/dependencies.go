package preview

import (
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
)

// workload records an object with spec.propagateDependencies for the dependencies preview:
// its references (the loop's extractor for its kind) and its clusters, from the schedule
// the scheduler would write (fed's status.schedule by now) and its status.clusters. A
// template the extractor cannot read is a problem.
func (r *run) workload(typ federation.TypeConfig, fed *federation.FederatedObject, what string) []Problem {
	if !fed.Spec.PropagateDependencies {
		return nil
	}
	extract := dependencies.Builtin()[typ.Target]
	if extract == nil {
		return []Problem{{Severity: Warning, Object: what, Field: "spec.propagateDependencies",
			Message: "the dependencies loop has no extractor for " + typ.Target.Kind + ": nothing follows it (register one in dependencies.Options.Extractors)"}}
	}
	refs, err := extract(fed.Spec.Template.Object)
	if err != nil {
		return []Problem{{Severity: Error, Object: what, Field: "spec.template", Message: err.Error()}}
	}
	r.refs[r.index] = refs
	if refs == nil {
		r.refs[r.index] = []dependencies.Reference{}
	}
	r.workloads[fed.Namespace] = append(r.workloads[fed.Namespace], dependencies.Workload{
		Kind: fed.Kind, Name: fed.Name, Clusters: dependencies.Clusters(fed), References: refs,
	})
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
					gain[r.objectIndex("Federated"+d.Kind, o.Namespace, d.Name)] = d.Clusters
				}
				o.Dependencies = append(o.Dependencies, dep)
			}
		}
	}
	delete(gain, -1)
	return gain
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
