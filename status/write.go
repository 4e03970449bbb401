package status

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
)

// write replaces the Collector's fields of u's status with agg's and writes the status. u
// must be the object agg was computed from (its status.clusters in the same order), and is
// modified: it is the caller's own copy. A Conflict is returned as is, for a retry.
func (c *Collector) write(ctx context.Context, u *unstructured.Unstructured, agg *Aggregation) error {
	status, _ := u.Object["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		u.Object["status"] = status
	}
	if err := setMembers(status, agg.Clusters); err != nil {
		return fmt.Errorf("status: %s %s/%s: %w", c.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	if agg.Aggregated == nil {
		delete(status, "aggregated")
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(agg.Aggregated)
		if err != nil {
			return fmt.Errorf("status: encode aggregated: %w", err)
		}
		status["aggregated"] = m
	}
	cond, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&agg.Ready)
	if err != nil {
		return fmt.Errorf("status: encode condition: %w", err)
	}
	status["conditions"] = setCondition(status["conditions"], cond)
	if _, err := c.host.UpdateStatus(ctx, c.typ.FederatedGVR(), u); err != nil {
		return fmt.Errorf("status: write status of %s %s/%s: %w", c.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// setMembers writes the owned fields of entries into status.clusters, entry i into item i.
func setMembers(status map[string]any, entries []federation.MemberStatus) error {
	list, _ := status["clusters"].([]any)
	if len(list) != len(entries) {
		return fmt.Errorf("status.clusters has %d entries, the aggregation %d", len(list), len(entries))
	}
	// The keys of an entry that the Collector owns. Every other key (name, sync's
	// propagation, message and revision, a field a newer version adds) is left as it is.
	owned := [...]string{
		"replicas", "readyReplicas", "availableReplicas", "updatedReplicas",
		"observedGeneration", "remoteStatus", "ready", "observedRevision", "lastObserved", "stale",
	}
	for i := range entries {
		item, ok := list[i].(map[string]any)
		if !ok {
			return fmt.Errorf("status.clusters[%d] is not an object", i)
		}
		enc, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&entries[i])
		if err != nil {
			return fmt.Errorf("encode status.clusters[%d]: %w", i, err)
		}
		for _, k := range owned {
			if v, ok := enc[k]; ok {
				item[k] = v
			} else {
				delete(item, k)
			}
		}
	}
	return nil
}

// setCondition returns the conditions list with the condition of cond's type replaced by cond
// (appended when absent); the other conditions are kept as they are.
func setCondition(raw any, cond map[string]any) []any {
	list, _ := raw.([]any)
	out := make([]any, 0, len(list)+1)
	replaced := false
	for _, it := range list {
		if m, ok := it.(map[string]any); ok && m["type"] == cond["type"] {
			if !replaced {
				out = append(out, cond)
				replaced = true
			}
			continue
		}
		out = append(out, it)
	}
	if !replaced {
		out = append(out, cond)
	}
	return out
}
