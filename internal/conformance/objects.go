package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// configMap returns a ConfigMap with the given labels and data.
func configMap(namespace, name string, labels, data map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetNamespace(namespace)
	u.SetName(name)
	if labels != nil {
		u.SetLabels(labels)
	}
	if data != nil {
		_ = unstructured.SetNestedStringMap(u.Object, data, "data")
	}
	return u
}

// deployment returns a valid apps/v1 Deployment running one container.
func deployment(namespace, name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{
					"containers": []any{map[string]any{"name": "main", "image": "registry.example/app:1"}},
				},
			},
		},
	}}
}

// cluster returns a fedkit Cluster (cluster-scoped, with a status subresource).
func cluster(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1",
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"apiEndpoint": "https://" + name + ".example.com:6443",
			"region":      "eu-west-1",
		},
	}}
}

func str(u *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, fields...)
	return s
}

func num(u *unstructured.Unstructured, fields ...string) int64 {
	n, _, _ := unstructured.NestedInt64(u.Object, fields...)
	return n
}

func set(t *testing.T, u *unstructured.Unstructured, value any, fields ...string) {
	t.Helper()
	require.NoError(t, unstructured.SetNestedField(u.Object, value, fields...))
}
