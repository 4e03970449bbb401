package status

import (
	"context"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// write replaces the Collector's fields of u's status with agg's and writes the status. u
// must be the object agg was computed from (its status.clusters in the same order), and is
// modified: it is the caller's own copy. A Conflict is returned as is, for a retry. With
// Options.StatusWriter the change is handed to it, merged with the other loops' changes to
// the object (entries matched by name then: sync may change the list before the write).
func (c *Collector) write(ctx context.Context, u *unstructured.Unstructured, agg *Aggregation) error {
	if w := c.opts.StatusWriter; w != nil {
		mutate := func(status map[string]any) error { return setStatus(status, agg, true) }
		if err := w.WriteStatus(fedmetrics.LoopStatus, c.typ.FederatedGVR(), u, mutate); err != nil {
			return fmt.Errorf("status: %s %s/%s: %w", c.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
		}
		return nil
	}
	status, _ := u.Object["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		u.Object["status"] = status
	}
	if err := setStatus(status, agg, false); err != nil {
		return fmt.Errorf("status: %s %s/%s: %w", c.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	if _, err := c.host.UpdateStatus(ctx, c.typ.FederatedGVR(), u); err != nil {
		return fmt.Errorf("status: write status of %s %s/%s: %w", c.typ.Federated.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// setStatus sets the Collector's fields of status from agg: the owned fields of each entry
// (entry i in item i, or by name with byName, in copies of the items), status.aggregated and
// the Ready condition.
func setStatus(status map[string]any, agg *Aggregation, byName bool) error {
	var err error
	if byName {
		err = setMembersByName(status, agg.Clusters)
	} else {
		err = setMembers(status, agg.Clusters)
	}
	if err != nil {
		return err
	}
	if agg.Aggregated == nil {
		delete(status, "aggregated")
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(agg.Aggregated)
		if err != nil {
			return fmt.Errorf("encode aggregated: %w", err)
		}
		status["aggregated"] = m
	}
	cond, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&agg.Ready)
	if err != nil {
		return fmt.Errorf("encode condition: %w", err)
	}
	status["conditions"] = setCondition(status["conditions"], cond)
	return nil
}

// ownedKeys are the keys of a status.clusters[] entry that the Collector owns. Every other key
// (name, sync's propagation, message and revision, a field a newer version adds) is left as
// it is.
var ownedKeys = [...]string{
	"replicas", "readyReplicas", "availableReplicas", "updatedReplicas",
	"observedGeneration", "remoteStatus", "ready", "observedRevision", "unhealthySince", "lastObserved", "stale",
}

// setOwned sets item's owned keys from e.
func setOwned(item map[string]any, e *federation.MemberStatus) error {
	enc, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e)
	if err != nil {
		return err
	}
	for _, k := range ownedKeys {
		if v, ok := enc[k]; ok {
			item[k] = v
		} else {
			delete(item, k)
		}
	}
	return nil
}

// setMembersByName writes the owned fields of entries into copies of the status.clusters items
// of the same name; items without an entry (sync listed them since) are left as they are, and
// entries without an item (sync dropped them since) are dropped.
func setMembersByName(status map[string]any, entries []federation.MemberStatus) error {
	list, _ := status["clusters"].([]any)
	byName := make(map[string]*federation.MemberStatus, len(entries))
	for i := range entries {
		byName[entries[i].Name] = &entries[i]
	}
	out := make([]any, len(list))
	for i, x := range list {
		out[i] = x
		item, ok := x.(map[string]any)
		if !ok {
			continue
		}
		name, _ := item["name"].(string)
		e := byName[name]
		if e == nil {
			continue
		}
		cp := maps.Clone(item)
		if err := setOwned(cp, e); err != nil {
			return fmt.Errorf("encode status.clusters[%d]: %w", i, err)
		}
		out[i] = cp
	}
	if len(list) > 0 {
		status["clusters"] = out
	}
	return nil
}

// setMembers writes the owned fields of entries into status.clusters, entry i into item i.
func setMembers(status map[string]any, entries []federation.MemberStatus) error {
	list, _ := status["clusters"].([]any)
	if len(list) != len(entries) {
		return fmt.Errorf("status.clusters has %d entries, the aggregation %d", len(list), len(entries))
	}
	for i := range entries {
		item, ok := list[i].(map[string]any)
		if !ok {
			return fmt.Errorf("status.clusters[%d] is not an object", i)
		}
		if err := setOwned(item, &entries[i]); err != nil {
			return fmt.Errorf("encode status.clusters[%d]: %w", i, err)
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
