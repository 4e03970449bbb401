package placement

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/fedkit/fedkit/federation"
)

// Require adds to the selection the clusters named by required (the clusters a dependency's
// workloads run in, [federation.RequiredClusters]): a required cluster that the placement
// left out is selected after the placement's own choice, in name order. It is the one place
// where "also these clusters" is decided, for the scheduler, sync and preview alike.
//
// clusters are the ones d was evaluated over. A required cluster that is not ready (or
// carries the not-ready or unreachable taint) stays out, diagnosed NotReady: nothing is
// written to such a cluster, and nothing is removed from it. A name that is not among
// clusters is ignored: the cluster left the federation. Require is meant for types copied whole
// (ConfigMaps, Secrets): an added cluster has no Domain for a ReplicaSpread.
func (d *Decision) Require(required []string, clusters []federation.Cluster) {
	if len(required) == 0 {
		return
	}
	names := slices.Clone(required)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if slices.ContainsFunc(d.Selected, func(c Candidate) bool { return c.Name == name }) {
			continue
		}
		i := slices.IndexFunc(d.Excluded, func(x Diagnosis) bool { return x.Cluster == name })
		c := slices.IndexFunc(clusters, func(c federation.Cluster) bool { return c.Name == name })
		if i < 0 || c < 0 || d.Excluded[i].Rule == NotReady {
			continue
		}
		if why, down := unready(&clusters[c]); down {
			d.Excluded[i] = Diagnosis{Cluster: name, Rule: NotReady, Detail: "required by dependent workloads, but " + why}
			continue
		}
		d.Excluded = slices.Delete(d.Excluded, i, i+1)
		d.Selected = append(d.Selected, Candidate{Name: name})
	}
}

// unready reports whether c is not ready or carries the not-ready or unreachable taint.
func unready(c *federation.Cluster) (string, bool) {
	if _, why, ok := notReadyTaint(c); ok {
		return why, true
	}
	for i := range c.Spec.Taints {
		t := &c.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectPreferNoSchedule && (t.Key == federation.TaintClusterNotReady || t.Key == federation.TaintClusterUnreachable) {
			return fmt.Sprintf("taint %s", taintString(t)), true
		}
	}
	return "", false
}
