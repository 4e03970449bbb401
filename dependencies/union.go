package dependencies

import (
	"slices"

	"github.com/fedkit/fedkit/federation"
)

// Workload is one federated workload with spec.propagateDependencies, as the union needs it.
type Workload struct {
	// Kind and Name name the federated object ("FederatedDeployment", "web").
	Kind, Name string
	// Clusters are where it runs or is placed ([Clusters]).
	Clusters []string
	// References are what its template refers to (an [Extractor]'s result).
	References []Reference
}

// Dependency is one referenced object and where it must be.
type Dependency struct {
	Reference
	// Clusters is the union of the clusters of every workload referring to it, sorted.
	Clusters []string
	// RequiredBy names those workloads, "Kind/name", sorted.
	RequiredBy []string
}

// Union returns every object the workloads refer to, sorted by kind and name, each with the
// union of its workloads' clusters. A dependency is Optional only when every workload's
// reference to it is. A dependency whose workloads run nowhere has no Clusters: it follows
// them nowhere, and a generated federated object for it is deleted.
func Union(workloads []Workload) []Dependency {
	var out []Dependency
	for _, w := range workloads {
		for _, r := range w.References {
			i := slices.IndexFunc(out, func(d Dependency) bool { return d.Kind == r.Kind && d.Name == r.Name })
			if i < 0 {
				out = append(out, Dependency{Reference: r})
				i = len(out) - 1
			}
			d := &out[i]
			d.Optional = d.Optional && r.Optional
			d.Clusters = append(d.Clusters, w.Clusters...)
			d.RequiredBy = append(d.RequiredBy, w.Kind+"/"+w.Name)
		}
	}
	for i := range out {
		slices.Sort(out[i].Clusters)
		out[i].Clusters = slices.Compact(out[i].Clusters)
		slices.Sort(out[i].RequiredBy)
		out[i].RequiredBy = slices.Compact(out[i].RequiredBy)
	}
	slices.SortFunc(out, func(a, b Dependency) int { return compareRefs(a.Reference, b.Reference) })
	return out
}

// Clusters returns where obj's dependencies must be, sorted: the clusters of its
// status.schedule (where it goes; a failover or placement change moves them), those of its
// graceful evictions (status.schedule.evictions: replicas kept there meanwhile), and every
// cluster status.clusters lists (sync lists the placed clusters and those that still hold
// its member object), so a dependency never leaves a cluster before its workload does.
func Clusters(obj *federation.FederatedObject) []string {
	var out []string
	if s := obj.Status.Schedule; s != nil {
		for _, c := range s.Clusters {
			out = append(out, c.Name)
		}
		for _, e := range s.Evictions {
			out = append(out, e.Cluster)
		}
	}
	for _, c := range obj.Status.Clusters {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
