package soak

import (
	"encoding/base64"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// Namespaces on the host. Objects live in the sync-created namespaces (no FederatedNamespace
// governs them: sync creates them in members as needed) and in one governed namespace, whose
// FederatedNamespace goes everywhere; the other FederatedNamespaces ("leaf-N") hold nothing and
// take the churn.
const (
	governedNamespace = "gov-0"
	tierLabel         = "soak.fedkit.io/tier"
	foreignAnnotation = "other-controller.example.com/seen"
)

func plainNamespaces(objects int) []string {
	n := max(objects/100, 2)
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("soak-%d", i)
	}
	return out
}

// Placement is a federated object's spec.placement as the script chooses it: clusters by
// name, or a selector (an empty one selects every cluster).
type Placement struct {
	Clusters []string          `json:"clusters,omitempty"`
	Selector map[string]string `json:"selector,omitempty"`
	// Exclude is spec.placement.excludeClusters.
	Exclude []string `json:"exclude,omitempty"`
}

func (p Placement) render() map[string]any {
	out := map[string]any{}
	if p.Clusters != nil {
		list := make([]any, 0, len(p.Clusters))
		for _, c := range p.Clusters {
			list = append(list, map[string]any{"name": c})
		}
		out["clusters"] = list
	} else {
		labels := map[string]any{}
		for k, v := range p.Selector {
			labels[k] = v
		}
		out["clusterSelector"] = map[string]any{"matchLabels": labels}
	}
	if len(p.Exclude) > 0 {
		ex := make([]any, 0, len(p.Exclude))
		for _, c := range p.Exclude {
			ex = append(ex, c)
		}
		out["excludeClusters"] = ex
	}
	return out
}

func (p Placement) String() string {
	s := fmt.Sprintf("selector=%v", p.Selector)
	if p.Clusters != nil {
		s = fmt.Sprintf("clusters=%v", p.Clusters)
	}
	if len(p.Exclude) > 0 {
		s += fmt.Sprintf(" exclude=%v", p.Exclude)
	}
	return s
}

// template returns a federated object's spec.template for kind and value v.
func template(kind string, name string, v int64) map[string]any {
	switch kind {
	case federation.DeploymentType.Federated.Kind:
		labels := map[string]any{"app": name}
		return map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec": map[string]any{
				"replicas": 1 + v%4,
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": name}},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": "app", "image": fmt.Sprintf("nginx:1.%d", v%30),
					}}},
				},
			},
		}
	case federation.ServiceType.Federated.Kind:
		typ := "ClusterIP"
		if v%5 == 0 {
			typ = "LoadBalancer"
		}
		return map[string]any{"spec": map[string]any{
			"type":     typ,
			"selector": map[string]any{"app": name},
			"ports":    []any{map[string]any{"name": "http", "port": 80 + v%3}},
		}}
	case federation.ConfigMapType.Federated.Kind:
		return map[string]any{"data": map[string]any{"value": fmt.Sprint(v), "name": name}}
	case federation.SecretType.Federated.Kind:
		return map[string]any{"type": "Opaque", "data": map[string]any{"password": base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "pw-%d", v))}}
	default: // Namespace
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{"soak": fmt.Sprintf("v%d", v)}}}
	}
}

// overrideOp is the override the script writes for one cluster with value v.
func overrideOp(kind string, v int64) map[string]any {
	switch kind {
	case federation.DeploymentType.Federated.Kind:
		return map[string]any{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": fmt.Sprintf("registry.example.com/app:%d", v)}
	case federation.ServiceType.Federated.Kind:
		return map[string]any{"op": "replace", "path": "/spec/ports/0/port", "value": 8000 + v%100}
	case federation.ConfigMapType.Federated.Kind:
		return map[string]any{"op": "replace", "path": "/data/value", "value": fmt.Sprintf("override-%d", v)}
	case federation.SecretType.Federated.Kind:
		return map[string]any{"op": "replace", "path": "/data/password", "value": base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "override-%d", v))}
	default:
		return map[string]any{"op": "replace", "path": "/metadata/labels/soak", "value": fmt.Sprintf("o%d", v)}
	}
}

// federatedObject builds a federated object.
func federatedObject(typ federation.TypeConfig, key federation.Key, v int64, p Placement) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": typ.Federated.GroupVersion().String(),
		"kind":       typ.Federated.Kind,
		"metadata":   map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec": map[string]any{
			"template":  template(typ.Federated.Kind, key.Name, v),
			"placement": p.render(),
		},
	}}
	return u
}

// setOverride sets (v > 0) or removes (v == 0) the override of cluster in u.
func setOverride(u *unstructured.Unstructured, kind, cluster string, v int64) {
	list, _, _ := unstructured.NestedSlice(u.Object, "spec", "overrides")
	list = slices.DeleteFunc(list, func(x any) bool {
		m, _ := x.(map[string]any)
		return m["clusterName"] == cluster
	})
	if v > 0 {
		list = append(list, map[string]any{"clusterName": cluster, "clusterOverrides": []any{overrideOp(kind, v)}})
	}
	if len(list) == 0 {
		unstructured.RemoveNestedField(u.Object, "spec", "overrides")
		return
	}
	_ = unstructured.SetNestedSlice(u.Object, list, "spec", "overrides")
}

// preference builds the ReplicaSchedulingPreference of a FederatedDeployment: total replicas,
// an even weight for every cluster and twice that for one.
func preference(key federation.Key, total int64, heavy string) *unstructured.Unstructured {
	clusters := map[string]any{"*": map[string]any{"weight": int64(1)}}
	if heavy != "" {
		clusters[heavy] = map[string]any{"weight": int64(2)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": federation.ReplicaSchedulingPreferenceGVR.GroupVersion().String(),
		"kind":       "ReplicaSchedulingPreference",
		"metadata":   map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec": map[string]any{
			"targetKind":    federation.DeploymentType.Federated.Kind,
			"totalReplicas": total,
			"clusters":      clusters,
		},
	}}
}

// namespaceObject is a Namespace on the host.
func namespaceObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
}

// typeOf returns the TypeConfig of a federated kind.
func typeOf(kind string) federation.TypeConfig {
	for _, t := range kinds() {
		if t.Federated.Kind == kind {
			return t
		}
	}
	return federation.TypeConfig{}
}
