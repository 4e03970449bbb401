package override

import (
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
	ptr := replicasPointer(typ)
	if ptr == "" {
		return nil
	}
	idx, err := selectFor(overrides, cluster, labels, nil)
	if err != nil {
		return nil
	}
	var found *field.Path
	for _, i := range idx {
		entry := field.NewPath("spec", "overrides").Index(i)
		if overrides[i].Replicas != nil {
			found = entry.Child("replicas")
		}
		for k, op := range overrides[i].ClusterOverrides {
			if n := opName(op.Op); op.Path == ptr && (n == federation.OpAdd || n == federation.OpReplace) {
				found = entry.Child("clusterOverrides").Index(k)
			}
		}
	}
	return found
}
