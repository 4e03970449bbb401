package override

import (
	"encoding/json"

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
	ptr := replicasPointer(typ)
	if ptr == "" || len(overrides) == 0 {
		return 0, nil, false
	}
	idx, err := selectFor(overrides, cluster, labels, nil)
	if err != nil {
		return 0, nil, false
	}
	for _, i := range idx {
		entry := field.NewPath("spec", "overrides").Index(i)
		if r := overrides[i].Replicas; r != nil {
			n, at, ok = *r, entry.Child("replicas"), *r >= 0
		}
		for k, op := range overrides[i].ClusterOverrides {
			if name := opName(op.Op); op.Path == ptr && (name == federation.OpAdd || name == federation.OpReplace) {
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
