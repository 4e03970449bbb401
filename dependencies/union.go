package dependencies

import (
	"slices"
	"strings"

	"github.com/fedkit/fedkit/federation"
)

// Workload is one federated workload with spec.propagateDependencies, as the union needs it.
type Workload struct {
	// Kind and Name name the federated object ("FederatedDeployment", "web").
	Kind, Name string
	// Clusters are where it runs or is placed ([Clusters]).
	Clusters []string
	// References are what its template refers to (an [Extractor]'s result): what its pods
	// refer to in every cluster but those of ByCluster.
	References []Reference
	// ByCluster holds, for the clusters whose overrides change what its pods refer to, what
	// they refer to there: the Extractor's result on the cluster's render ([WorkloadOf]).
	ByCluster map[string][]Reference
	// Deleting: the workload is being deleted on the host. Its clusters keep a dependency
	// where it is (its member copies run until sync removes them) and add none: they are
	// the dependency's Leaving.
	Deleting bool
	// Orphaning: the workload is being deleted with federation.OrphanAnnotation, so sync
	// orphans its member copies: they keep running, no longer managed. Its clusters are
	// its dependencies' Released.
	Orphaning bool
}

// Dependency is one referenced object and where it must be.
type Dependency struct {
	Reference
	// Clusters is the union of the clusters of every workload referring to it, sorted.
	Clusters []string
	// RequiredBy names those workloads, "Kind/name", sorted.
	RequiredBy []string
	// Leaving are the clusters only workloads being deleted give it, sorted: it stays in
	// those it is in, and goes to none of them ([Dependency.Where]).
	Leaving []string
	// Released are the clusters where an orphaning workload's pods refer to it, sorted:
	// those pods keep running, so its copy there is released, never deleted, when it leaves
	// ([Dependency.Releases]).
	Released []string
}

// Releases returns the clusters where d's copy is released rather than deleted when d leaves
// them, sorted: those of current (federation.ReleaseClustersAnnotation as it is) and those of
// Released that d is in (placed, the clusters it is in now; nil when federated nowhere). A
// cluster stays listed: an orphaned copy of a workload there may use d for as long as it
// runs, which fedkit cannot see any more, so d's copy there is never deleted by a move.
func (d Dependency) Releases(current, placed []string) []string {
	out := slices.Clone(current)
	for _, c := range d.Released {
		if slices.Contains(placed, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Where returns the clusters d must be in, sorted, given current, the clusters it is in now
// (a generated Federated<Kind>'s placement, the required-by-clusters annotation of the
// user's; nil when it is federated nowhere): its Clusters, and those of Leaving it is in
// already. A workload being deleted never widens its dependency: a pass that still reads it
// while it goes (a cache behind the host) cannot put back what an earlier pass took away,
// nor federate a dependency that only it needs.
func (d Dependency) Where(current []string) []string {
	out := slices.Clone(d.Clusters)
	for _, c := range d.Leaving {
		if slices.Contains(current, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Kinds returns the Federated kinds of the workloads that require d (its RequiredBy), sorted,
// without repeats.
func (d Dependency) Kinds() []string {
	var out []string
	for _, w := range d.RequiredBy {
		if kind, _, ok := strings.Cut(w, "/"); ok {
			out = append(out, kind)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Union returns every object the workloads refer to, sorted by kind and name, each with the
// union of the clusters whose pods refer to it: a workload's cluster counts for a reference
// its render there has (Workload.ByCluster, else its template's). A workload that runs
// nowhere refers to what its template does. A dependency is Optional only when every
// workload's reference to it is. A dependency whose workloads run nowhere has no Clusters: it
// follows them nowhere. The clusters of workloads being deleted are the dependency's Leaving,
// not its Clusters; those of workloads being orphaned are its Released too.
func Union(workloads []Workload) []Dependency {
	var out []Dependency
	at := func(r Reference) *Dependency {
		i := slices.IndexFunc(out, func(d Dependency) bool { return d.Kind == r.Kind && d.Name == r.Name })
		if i < 0 {
			out = append(out, Dependency{Reference: r})
			i = len(out) - 1
		} else {
			out[i].Optional = out[i].Optional && r.Optional
		}
		return &out[i]
	}
	for _, w := range workloads {
		for _, r := range w.Referenced() {
			d := at(r)
			d.RequiredBy = append(d.RequiredBy, w.Kind+"/"+w.Name)
		}
		for _, c := range w.Clusters {
			for _, r := range w.In(c) {
				d := at(r)
				if w.Deleting {
					d.Leaving = append(d.Leaving, c)
				} else {
					d.Clusters = append(d.Clusters, c)
				}
				if w.Orphaning {
					d.Released = append(d.Released, c)
				}
			}
		}
	}
	for i := range out {
		d := &out[i]
		slices.Sort(d.Clusters)
		d.Clusters = slices.Compact(d.Clusters)
		d.Leaving = slices.DeleteFunc(d.Leaving, func(c string) bool { return slices.Contains(d.Clusters, c) })
		slices.Sort(d.Leaving)
		d.Leaving = slices.Compact(d.Leaving)
		if len(d.Leaving) == 0 {
			d.Leaving = nil
		}
		slices.Sort(d.Released)
		d.Released = slices.Compact(d.Released)
		slices.Sort(d.RequiredBy)
		d.RequiredBy = slices.Compact(d.RequiredBy)
	}
	slices.SortFunc(out, func(a, b Dependency) int { return compareRefs(a.Reference, b.Reference) })
	return out
}

// In returns what w's pods refer to in cluster: ByCluster's entry, else References.
func (w Workload) In(cluster string) []Reference {
	if refs, ok := w.ByCluster[cluster]; ok {
		return refs
	}
	return w.References
}

// Referenced returns what w's pods refer to anywhere, sorted, each once: in each of its
// clusters, or, when it runs nowhere, in its template. A reference optional in one cluster
// and not in another is not optional.
func (w Workload) Referenced() []Reference {
	if len(w.Clusters) == 0 {
		return w.References
	}
	var c collector
	for _, cluster := range w.Clusters {
		for _, r := range w.In(cluster) {
			opt := r.Optional
			c.add(r.Kind, r.Name, &opt)
		}
	}
	return c.sorted()
}

// Clusters returns where obj's dependencies must be, sorted: the clusters of its
// status.schedule (where it goes; a failover or placement change moves them), those of its
// graceful evictions in every state (status.schedule.evictions: Waiting and Held keep
// replicas there, Released a copy sync is releasing), and every
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
