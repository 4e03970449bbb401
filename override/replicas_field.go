package override

import (
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fedkit/fedkit/federation"
)

// ReplicasField returns the field of spec.overrides that sets the replica count of the
// member object for a cluster, when one does: a replicas overrider
// (spec.overrides[2].replicas) or an add or replace operation at the type's replica path
// (spec.overrides[0].clusterOverrides[1]). Where several do, it is the one that applies
// last, as Render applies them: the entries in ForCluster order (selector entries in list
// order, then the one naming the cluster), and in each entry the typed overriders before the
// raw operations. It returns nil when no override sets the count, when the type has none,
// or when the entries cannot be selected (ForCluster's error; validation reports it).
//
// A dry run uses it to say which override made a member's count differ from the schedule.
// An operation on a parent of the replica path (replace /spec) is not traced.
func ReplicasField(overrides []federation.ClusterOverride, typ federation.TypeConfig, cluster string, labels map[string]string) *field.Path {
	_, at, _ := ReplicasOverride(overrides, typ, cluster, labels)
	return at
}

// ReplicasOverride returns the replica count the overrides set for a cluster's member
// object and the field that sets it (the one [ReplicasField] names): n is what the member
// runs instead of its share of the schedule. ok is false when no override sets the count
// or when the value of the one that applies last is not a non-negative integer (the member
// then gets what validation rejects; at still names the field). The scheduler reads n to
// know how many replicas a cluster that gains some must report before a graceful eviction
// removes the copy they replace.
func ReplicasOverride(overrides []federation.ClusterOverride, typ federation.TypeConfig, cluster string, labels map[string]string) (n int64, at *field.Path, ok bool) {
	return replicasOverride(overrides, replicasPointer(typ), cluster, labels, nil)
}

// ReplicasOverrides is ReplicasOverride for each of clusters at once: the counts the
// overrides set, by cluster name, for those where one does (nil when none does). Each
// selector is parsed once for all clusters.
func ReplicasOverrides(overrides []federation.ClusterOverride, typ federation.TypeConfig, clusters []federation.Cluster) map[string]int64 {
	ptr := replicasPointer(typ)
	if ptr == "" || !slices.ContainsFunc(overrides, func(o federation.ClusterOverride) bool { return setsReplicas(o, ptr) }) {
		return nil
	}
	sh := &shared{selectors: make([]labels.Selector, len(overrides)), selErrs: make([]error, len(overrides))}
	var out map[string]int64
	for i := range clusters {
		if n, _, ok := replicasOverride(overrides, ptr, clusters[i].Name, clusters[i].Labels, sh); ok {
			if out == nil {
				out = map[string]int64{}
			}
			out[clusters[i].Name] = n
		}
	}
	return out
}

// setsReplicas reports whether entry o has an overrider or an operation that sets the
// replica count at ptr.
func setsReplicas(o federation.ClusterOverride, ptr string) bool {
	return o.Replicas != nil || slices.ContainsFunc(o.ClusterOverrides, func(op federation.OverrideOp) bool { return setsCount(op, ptr) })
}

// setsCount reports whether op writes the replica count at ptr (an add or a replace).
func setsCount(op federation.OverrideOp, ptr string) bool {
	name := opName(op.Op)
	return op.Path == ptr && (name == federation.OpAdd || name == federation.OpReplace)
}

// replicasOverride is ReplicasOverride for the type's replica pointer ptr, with sh keeping
// the parsed selectors between the clusters of one object (nil: none kept).
func replicasOverride(overrides []federation.ClusterOverride, ptr, cluster string, set map[string]string, sh *shared) (n int64, at *field.Path, ok bool) {
	if ptr == "" || len(overrides) == 0 {
		return 0, nil, false
	}
	idx, err := selectFor(overrides, cluster, set, sh)
	if err != nil {
		return 0, nil, false
	}
	for _, i := range idx {
		entry := field.NewPath("spec", "overrides").Index(i)
		if r := overrides[i].Replicas; r != nil {
			n, at, ok = *r, entry.Child("replicas"), *r >= 0
		}
		for k, op := range overrides[i].ClusterOverrides {
			if setsCount(op, ptr) {
				at = entry.Child("clusterOverrides").Index(k)
				n, ok = 0, false
				if op.Value != nil && json.Unmarshal(op.Value.Raw, &n) == nil && n >= 0 {
					ok = true
				}
			}
		}
	}
	if !ok {
		n = 0
	}
	return n, at, ok
}
