package propagation

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// SourceGenerationAnnotation on a generated object records the native object's
// metadata.generation it was rendered from, so the native observedGeneration can follow.
const SourceGenerationAnnotation = "federation.k8s.io/source-generation"

// Generate returns the Federated<Kind> of typ for native under p: the [federation.NativeTemplate], p's
// placement, overrides, rollout, retainReplicas and propagateDependencies; the generated
// label, the policy and source generation annotations, the orphan annotation when native
// has it, the adopt annotation when p's conflictResolution is Overwrite, the removal
// annotation when its removal is Delete; and a controller ownerReference to native.
func Generate(typ federation.TypeConfig, native *unstructured.Unstructured, p Policy) (*unstructured.Unstructured, error) {
	fed := &federation.FederatedObject{}
	fed.APIVersion, fed.Kind = typ.Federated.ToAPIVersionAndKind()
	fed.Namespace, fed.Name = native.GetNamespace(), native.GetName()
	fed.Labels = map[string]string{federation.GeneratedByLabel: federation.GeneratedByPropagation}
	fed.Annotations = map[string]string{
		federation.PolicyAnnotation: p.Ref(),
		SourceGenerationAnnotation:  strconv.FormatInt(native.GetGeneration(), 10),
	}
	if native.GetAnnotations()[federation.OrphanAnnotation] == "true" {
		fed.Annotations[federation.OrphanAnnotation] = "true"
	}
	if p.Spec.ConflictResolution == federation.ConflictOverwrite {
		fed.Annotations[federation.AdoptAnnotation] = "true"
	}
	if p.Spec.Removal == federation.PolicyRemovalDelete {
		fed.Annotations[federation.RemovalAnnotation] = string(federation.PolicyRemovalDelete)
	}
	controller := true
	fed.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: native.GetAPIVersion(), Kind: native.GetKind(), Name: native.GetName(), UID: native.GetUID(), Controller: &controller,
	}}
	s := p.Spec.DeepCopy()
	fed.Spec = federation.FederatedSpec{
		Template:              federation.RawObject{Object: federation.NativeTemplate(native)},
		Placement:             s.Placement,
		Overrides:             s.Overrides,
		RetainReplicas:        s.RetainReplicas,
		Rollout:               s.Rollout,
		PropagateDependencies: s.PropagateDependencies,
	}
	return normalize(fed)
}

// Preference returns the ReplicaSchedulingPreference p's spec.scheduling asks for, of the
// generated object's name and owned by it (fed's uid), or nil when p has none. Its
// totalReplicas defaults to the native object's replicas.
func Preference(typ federation.TypeConfig, native, fed *unstructured.Unstructured, p Policy) (*unstructured.Unstructured, error) {
	sc := p.Spec.Scheduling
	if sc == nil {
		return nil, nil
	}
	sc = sc.DeepCopy()
	total := int64(0)
	if sc.TotalReplicas != nil {
		total = *sc.TotalReplicas
	} else if f := typ.ReplicasFields(); f != nil {
		if n, ok, _ := unstructured.NestedInt64(native.Object, f...); ok {
			total = n
		}
	}
	rsp := &federation.ReplicaSchedulingPreference{}
	rsp.APIVersion, rsp.Kind = federation.ReplicaSchedulingPreferenceGVK.ToAPIVersionAndKind()
	rsp.Namespace, rsp.Name = fed.GetNamespace(), fed.GetName()
	rsp.Labels = map[string]string{federation.GeneratedByLabel: federation.GeneratedByPropagation}
	rsp.Annotations = map[string]string{federation.PolicyAnnotation: p.Ref()}
	controller := true
	rsp.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: fed.GetAPIVersion(), Kind: fed.GetKind(), Name: fed.GetName(), UID: fed.GetUID(), Controller: &controller,
	}}
	rsp.Spec = federation.ReplicaSchedulingPreferenceSpec{
		TargetKind: typ.Federated.Kind, TotalReplicas: total, Rebalance: sc.Rebalance,
		RebalancePeriod: sc.RebalancePeriod, IntersectWithClusterSelector: sc.IntersectWithClusterSelector,
		Algorithm: sc.Algorithm, Strategy: sc.Strategy, Clusters: sc.Clusters, Failover: sc.Failover,
	}
	return normalize(rsp)
}

// normalize converts a typed object to unstructured through JSON, so its numbers and
// empty fields look as they do when read back from an API server.
func normalize(obj any) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("propagation: %w: %v", federation.ErrInvalidObject, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("propagation: %w: %v", federation.ErrInvalidObject, err)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}

// NativeStatus returns the native status fields for a workload kind (Deployment,
// StatefulSet, ReplicaSet, DaemonSet) from its generated object's status: the aggregated
// replicas, ready, available and updated counts, and observedGeneration = the native
// generation the generated object was rendered from, once its Ready condition observed the
// generated object's generation. ok is false for other kinds and before any aggregate.
func NativeStatus(native, fed *unstructured.Unstructured) (fields map[string]int64, ok bool) {
	names := statusNames(native)
	if names == nil {
		return nil, false
	}
	agg, found, _ := unstructured.NestedMap(fed.Object, "status", "aggregated")
	if !found {
		return nil, false
	}
	num := func(k string) int64 { return toInt64(agg[k]) }
	fields = map[string]int64{}
	for from, to := range names {
		fields[to] = num(from)
	}
	if observed(fed) {
		if g, err := strconv.ParseInt(fed.GetAnnotations()[SourceGenerationAnnotation], 10, 64); err == nil && g == native.GetGeneration() {
			fields["observedGeneration"] = g
		}
	}
	return fields, true
}

// statusNames maps the aggregated counts to the native status fields of a workload kind
// (Deployment, StatefulSet, ReplicaSet, DaemonSet); nil for other kinds.
func statusNames(native *unstructured.Unstructured) map[string]string {
	switch native.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps", "StatefulSet.apps", "ReplicaSet.apps":
		return map[string]string{"replicas": "replicas", "readyReplicas": "readyReplicas", "availableReplicas": "availableReplicas", "updatedReplicas": "updatedReplicas"}
	case "DaemonSet.apps":
		// A DaemonSet counts pods, under its own names.
		return map[string]string{"replicas": "desiredNumberScheduled", "readyReplicas": "numberReady", "availableReplicas": "numberAvailable", "updatedReplicas": "updatedNumberScheduled"}
	}
	return nil
}

// ClearedStatus returns native without the status fields [NativeStatus] writes (the
// fleet's counts and observedGeneration), and whether it had any: what the host object
// says once no policy federates it, and nothing runs for it any more.
func ClearedStatus(native *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	names := statusNames(native)
	st, _, _ := unstructured.NestedMap(native.Object, "status")
	if names == nil || len(st) == 0 {
		return native, false
	}
	n := native.DeepCopy()
	changed := false
	for _, k := range append(slices.Collect(maps.Values(names)), "observedGeneration") {
		if _, ok, _ := unstructured.NestedFieldNoCopy(n.Object, "status", k); ok {
			unstructured.RemoveNestedField(n.Object, "status", k)
			changed = true
		}
	}
	return n, changed
}

// observed reports whether fed's Ready condition observed its current generation.
func observed(fed *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(fed.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != federation.ConditionReady {
			continue
		}
		g := toInt64(m["observedGeneration"])
		return g != 0 && g == fed.GetGeneration()
	}
	return false
}

// toInt64 reads a JSON number, decoded as int64 (an API server's) or float64 (encoding/json).
func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}
