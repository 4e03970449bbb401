package dependencies

import (
	"fmt"
	"slices"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// WorkloadOf returns obj, a federated object of type typ with spec.propagateDependencies, as
// [Union] needs it: its clusters ([Clusters]), what its template refers to (extract's
// result), and, in each cluster whose overrides make its pods refer to other objects, what
// they refer to there (ByCluster): extract on the cluster's render, rendered as sync renders
// it (override's Renderer, with the cluster's name and labels). So a dependency goes where
// the pods that use it run, after overrides. fleet gives the clusters' labels, for selector
// overrides; it is read only when obj has overrides. A render that fails is sync's to report
// (nothing goes to that cluster): the template's references stand for it. It is pure, for the
// loop and package preview alike. The error names the object, the field and, for a render,
// the cluster.
func WorkloadOf(typ federation.TypeConfig, extract Extractor, obj *federation.FederatedObject, fleet []federation.Cluster) (Workload, error) {
	kind := typ.Federated.Kind
	refs, err := extract(obj.Spec.Template.Object)
	if err != nil {
		return Workload{}, fmt.Errorf("%s %s/%s: %w", kind, obj.Namespace, obj.Name, err)
	}
	deleting := obj.DeletionTimestamp != nil
	w := Workload{Kind: kind, Name: obj.Name, Clusters: Clusters(obj), References: refs, Deleting: deleting,
		Orphaning: deleting && obj.Annotations[federation.OrphanAnnotation] == "true"}
	if len(obj.Spec.Overrides) == 0 || len(w.Clusters) == 0 {
		return w, nil
	}
	members := make([]override.Member, 0, len(w.Clusters))
	for _, c := range w.Clusters {
		m := override.Member{Name: c}
		if i := slices.IndexFunc(fleet, func(fc federation.Cluster) bool { return fc.Name == c }); i >= 0 {
			m.Labels = fleet[i].Labels
		}
		members = append(members, m)
	}
	var renderer override.Renderer
	for i, res := range renderer.RenderMembers(override.InputFor(obj, typ), members) {
		if res.Err != nil {
			continue
		}
		got, err := extract(res.Object.Object)
		if err != nil {
			return Workload{}, fmt.Errorf("%s %s/%s in cluster %q: %w", kind, obj.Namespace, obj.Name, members[i].Name, err)
		}
		if !slices.Equal(got, refs) {
			if w.ByCluster == nil {
				w.ByCluster = map[string][]Reference{}
			}
			w.ByCluster[members[i].Name] = got
		}
	}
	return w, nil
}
