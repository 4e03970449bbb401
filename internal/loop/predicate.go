package loop

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ClusterChanged is the Source.Changed predicate of Cluster sources: it reports whether
// anything that placement, scheduling or propagation can depend on differs between two
// versions of a Cluster: its labels, deletion, spec, and status apart from the cluster
// monitor's bookkeeping.
//
// Left out are status.lastHeartbeatTime and, in status.conditions, everything but each
// condition's type and status (lastTransitionTime, reason, message, observedGeneration). The
// cluster monitor refreshes those on every probe, and a loop that broadcasts Cluster changes
// would otherwise reconcile every federated object on every heartbeat of every cluster: at
// 10,000 objects and 1,000 clusters, a heartbeat round would cost ten million reconciles.
func ClusterChanged(old, new *unstructured.Unstructured) bool {
	return !equality.Semantic.DeepEqual(clusterView(old), clusterView(new))
}

// clusterView is the part of a Cluster that ClusterChanged compares.
func clusterView(u *unstructured.Unstructured) map[string]any {
	view := map[string]any{
		"labels":   u.GetLabels(),
		"deleting": u.GetDeletionTimestamp() != nil,
		"spec":     u.Object["spec"],
	}
	status, _ := u.Object["status"].(map[string]any)
	trimmed := make(map[string]any, len(status))
	for k, v := range status {
		switch k {
		case "lastHeartbeatTime":
		case "conditions":
			list, _ := v.([]any)
			conds := make([]any, 0, len(list))
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					conds = append(conds, [2]any{m["type"], m["status"]})
				}
			}
			trimmed[k] = conds
		default:
			trimmed[k] = v
		}
	}
	view["status"] = trimmed
	return view
}
