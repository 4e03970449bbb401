package status

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// Observation is what the Collector learns from one member object: the fields it copies into
// the object's status.clusters[] entry, and whether the object counts as ready.
//
// An Observation is plain data. Extractors build it from the member object alone, so they are
// pure functions that table tests and fuzzing cover without a cluster.
type Observation struct {
	// Replicas is the member's desired count for workload kinds (spec.replicas as the member
	// has it; a DaemonSet's desiredNumberScheduled), and ReadyReplicas, AvailableReplicas and
	// UpdatedReplicas its observed progress, as kubectl's READY 2/3 puts them; all nil for
	// kinds that have none. They are summed into status.aggregated, and the scheduler reads
	// Replicas of fresh entries as the replicas the cluster currently holds.
	Replicas, ReadyReplicas, AvailableReplicas, UpdatedReplicas *int64

	// ObservedGeneration is the member object's status.observedGeneration, nil when it
	// reports none.
	ObservedGeneration *int64

	// Remote holds selected status fields for kinds without replica counts (a Service's
	// loadBalancer, a Job's counts, another kind's raw status). The Collector caps its
	// encoded size (Options.MaxRemoteStatusBytes).
	Remote map[string]any

	// Ready is true when the member object is up to date (its controller has observed its
	// latest generation) and fully available, as its kind defines it.
	Ready bool

	// Progressing is true when the member object is not Ready but its own controller says it
	// is getting there in time: a Deployment whose rollout progresses within
	// progressDeadlineSeconds with its availability held. Application failover does not count
	// such an object as unhealthy (status.clusters[].unhealthySince stays unset); a stalled or
	// failing one counts. Only DeploymentStatus sets it among the built-in extractors.
	Progressing bool

	// Revision is the member object's federation.RevisionAnnotation (0 when absent): the
	// revision it runs. The Collector sets it after the Extractor ran; extractors leave it 0.
	Revision int64

	// Message says why the object is not ready ("2 of 3 replicas available"). It is part of
	// the federated object's Ready condition, so it must depend on the object's state only
	// (no timestamps), or every pass would write.
	Message string
}

// Extractor reads a member object's status into an Observation. It must not modify obj and
// must not panic on any input: member objects are written by other controllers and users.
// A status field of the wrong type is an error wrapping [ErrInvalidMemberStatus] that names
// the field; the Collector then reports the cluster not ready with that message.
type Extractor func(obj *unstructured.Unstructured) (Observation, error)

// Extractors maps a target kind to its Extractor. [Options].Extractors adds to and overrides
// [DefaultExtractors]; a kind found in neither is read by [RulesExtractor]: [GenericStatus]
// and the kind's rules.
type Extractors map[schema.GroupKind]Extractor

// DefaultExtractors returns a new table of the built-in extractors: apps Deployment,
// ReplicaSet, StatefulSet and DaemonSet, batch Job and core Service. The caller owns the map.
func DefaultExtractors() Extractors {
	return Extractors{
		{Group: "apps", Kind: "Deployment"}:  DeploymentStatus,
		{Group: "apps", Kind: "ReplicaSet"}:  ReplicaSetStatus,
		{Group: "apps", Kind: "StatefulSet"}: StatefulSetStatus,
		{Group: "apps", Kind: "DaemonSet"}:   DaemonSetStatus,
		{Group: "batch", Kind: "Job"}:        JobStatus,
		{Group: "", Kind: "Service"}:         ServiceStatus,
	}
}

// extractorFor returns the extractor of typ's kind: custom's entry (nil there means
// GenericStatus), else KindExtractor's.
func extractorFor(custom Extractors, typ federation.TypeConfig) Extractor {
	if e, ok := custom[typ.Target.GroupKind()]; ok {
		if e == nil {
			return GenericStatus
		}
		return e
	}
	return KindExtractor(typ)
}

// fields reads integer fields of one object, remembering the first type error, so an
// extractor reads everything and checks once.
type fields struct {
	obj map[string]any
	err error
}

// int returns the integer at path and whether it is present. Absent means 0 for the API's
// omitempty counters. JSON numbers decoded as float64 are accepted when they are integral.
func (f *fields) int(path ...string) (int64, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(f.obj, path...)
	if err != nil || !ok || v == nil {
		if err != nil && f.err == nil {
			f.err = fmt.Errorf("%w: %s: %v", ErrInvalidMemberStatus, strings.Join(path, "."), err)
		}
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
	}
	if f.err == nil {
		f.err = fmt.Errorf("%w: %s: want an integer, got %s", ErrInvalidMemberStatus, strings.Join(path, "."), describe(v))
	}
	return 0, false
}

// count returns the counter at path as a pointer, 0 when absent.
func (f *fields) count(path ...string) *int64 {
	n, _ := f.int(path...)
	return &n
}

// optional returns the integer at path, or nil when absent.
func (f *fields) optional(path ...string) *int64 {
	if n, ok := f.int(path...); ok {
		return &n
	}
	return nil
}

// desired returns spec.replicas, 1 when absent (the API default).
func (f *fields) desired() int64 {
	if n, ok := f.int("spec", "replicas"); ok {
		return n
	}
	return 1
}

// describe names a JSON value's type for error messages, without quoting the value (it may be
// large).
func describe(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case float64:
		return "a fractional number"
	}
	return fmt.Sprintf("%T", v)
}

// conditions returns the status conditions that are objects with a string type, in order.
// Malformed entries are skipped: a condition list is informative, never a reason to fail.
func conditions(obj map[string]any) []map[string]any {
	list, _, _ := unstructured.NestedFieldNoCopy(obj, "status", "conditions")
	items, _ := list.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if _, ok := m["type"].(string); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// condition returns the condition of type t, or nil.
func condition(obj map[string]any, t string) map[string]any {
	for _, c := range conditions(obj) {
		if c["type"] == t {
			return c
		}
	}
	return nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// copyJSON deep-copies a JSON value, tolerating the odd types a hand-built object may hold
// (runtime.DeepCopyJSONValue panics on those): they are converted through JSON.
func copyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = copyJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = copyJSON(x)
		}
		return out
	case string, int64, bool, float64, nil, json.Number:
		return runtime.DeepCopyJSONValue(t)
	case int:
		return int64(t)
	case int32:
		return int64(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return string(b)
	}
	return copyJSON(out)
}

// copyMap deep-copies a JSON object with copyJSON.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range maps.All(m) {
		out[k] = copyJSON(v)
	}
	return out
}
