package placement

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
)

// Require adds to the selection the clusters named by required (the clusters a dependency's
// workloads run in, [federation.RequiredClusters]): a required cluster that the placement
// left out is selected after the placement's own choice, in name order. It is the one place
// where "also these clusters" is decided, for the scheduler, sync and preview alike. in is
// what d was decided from ([Place]'s input).
//
// An explicit exclusion wins over a workload's need ([Refused]): a required cluster that the
// placement excludes (excludeClusters), whose region or zones its clusterAffinity.required
// refuses, or with a NoSchedule or NoExecute taint it does not tolerate, stays out, with that
// rule and a detail saying it was required. Only a cluster the placement merely does not list
// or select (or one spread constraints or maxClusters left out) is added.
//
// A required cluster that is not ready (or carries the not-ready or unreachable taint) stays
// out, diagnosed NotReady: nothing is written to such a cluster, and nothing is removed from
// it. A name that is not among in.Clusters is ignored: the cluster left the federation.
// Require is meant for types copied whole (ConfigMaps, Secrets): an added cluster has no
// Domain for a ReplicaSpread.
func (d *Decision) Require(required []string, in Input) {
	if len(required) == 0 {
		return
	}
	names := slices.Clone(required)
	slices.Sort(names)
	f, valid := explicitFilter(in)
	for _, name := range slices.Compact(names) {
		if slices.ContainsFunc(d.Selected, func(c Candidate) bool { return c.Name == name }) {
			continue
		}
		i := slices.IndexFunc(d.Excluded, func(x Diagnosis) bool { return x.Cluster == name })
		c := slices.IndexFunc(in.Clusters, func(c federation.Cluster) bool { return c.Name == name })
		if i < 0 || c < 0 || d.Excluded[i].Rule == NotReady {
			continue
		}
		if why, down := unready(&in.Clusters[c]); down {
			d.Excluded[i] = Diagnosis{Cluster: name, Rule: NotReady, Detail: "required by dependent workloads, but " + why}
			continue
		}
		var k keep
		if valid {
			var rule Rule
			var detail string
			if rule, detail, k = f.filter(&in.Clusters[c]); rule != 0 {
				d.Excluded[i] = Diagnosis{Cluster: name, Rule: rule, Detail: "required by dependent workloads, but " + detail}
				continue
			}
		}
		d.Excluded = slices.Delete(d.Excluded, i, i+1)
		d.Selected = append(d.Selected, Candidate{Name: name})
		d.keep(name, k)
	}
}

// Refused returns the clusters among required that in.Placement explicitly refuses, by name,
// each with its rule and detail: listed in excludeClusters ([ExcludeClusters]), outside
// clusterAffinity.required ([RequiredAffinity]), or with a NoSchedule or NoExecute taint the
// placement does not tolerate ([Taint]; a NoSchedule one only where the object does not run,
// in.Running). Not being listed in spec.placement.clusters, nor matched by its selector, is no
// refusal: that is what a workload's need adds to ([Decision.Require]). A cluster that is not
// ready, not among in.Clusters, or an invalid placement (which the scheduler reports) gives
// none. Package dependencies reports these clusters on the workloads that need them there.
func Refused(in Input, required []string) map[string]Diagnosis {
	f, valid := explicitFilter(in)
	if !valid {
		return nil
	}
	var out map[string]Diagnosis
	for i := range in.Clusters {
		c := &in.Clusters[i]
		if !slices.Contains(required, c.Name) {
			continue
		}
		if _, down := unready(c); down {
			continue
		}
		if rule, detail, _ := f.filter(c); rule != 0 && rule != NotReady {
			if out == nil {
				out = map[string]Diagnosis{}
			}
			out[c.Name] = Diagnosis{Cluster: c.Name, Rule: rule, Detail: detail}
		}
	}
	return out
}

// explicitFilter is the filter of rules 2 to 5 of [Place] alone: every cluster is a member
// (rule 1 is what a requirement overrides). It reports false for an invalid placement.
func explicitFilter(in Input) (filterer, bool) {
	p := in.Placement
	if errs := federation.ValidatePlacement(p, field.NewPath("spec", "placement")); len(errs) > 0 {
		return filterer{}, false
	}
	return filterer{p: &p, sel: labels.Everything(), excluded: nameSet(p.ExcludeClusters), running: nameSet(in.Running), now: in.Now}, true
}

// keep records in Kept, which stays sorted by cluster, that cluster stays only for a while
// or only because the object runs there, when k says so; Recheck is the earliest end.
func (d *Decision) keep(cluster string, k keep) {
	if k.why == "" {
		return
	}
	i, _ := slices.BinarySearchFunc(d.Kept, cluster, func(x Diagnosis, name string) int { return strings.Compare(x.Cluster, name) })
	d.Kept = slices.Insert(d.Kept, i, Diagnosis{Cluster: cluster, Rule: k.rule, Detail: k.why, Until: k.until})
	if !k.until.IsZero() && (d.Recheck.IsZero() || k.until.Before(d.Recheck)) {
		d.Recheck = k.until
	}
}

// nameSet is names as a set; nil for none.
func nameSet(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
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
