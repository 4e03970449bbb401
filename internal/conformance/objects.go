package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// secret returns an Opaque core/v1 Secret without data.
func secret(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque"}}
	u.SetNamespace(namespace)
	u.SetName(name)
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

// daemonSet returns a valid apps/v1 DaemonSet running one container.
func daemonSet(namespace, name string) *unstructured.Unstructured {
	d := deployment(namespace, name, 1)
	d.SetKind("DaemonSet")
	unstructured.RemoveNestedField(d.Object, "spec", "replicas")
	return d
}

// endpointSlice returns a valid discovery.k8s.io/v1 EndpointSlice with one IPv4 endpoint.
func endpointSlice(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":  "discovery.k8s.io/v1",
		"kind":        "EndpointSlice",
		"metadata":    map[string]any{"name": name, "namespace": namespace},
		"addressType": "IPv4",
		"endpoints":   []any{map[string]any{"addresses": []any{"10.0.0.1"}}},
	}}
}

// lease returns a coordination.k8s.io/v1 Lease held by holder.
func lease(namespace, name, holder string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1",
		"kind":       "Lease",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       map[string]any{"holderIdentity": holder},
	}}
}

// priorityClass returns a scheduling.k8s.io/v1 PriorityClass (cluster-scoped).
func priorityClass(name string, value int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":  "scheduling.k8s.io/v1",
		"kind":        "PriorityClass",
		"metadata":    map[string]any{"name": name},
		"value":       value,
		"description": "conformance",
	}}
}

// invalidFields returns the fields a 422 Invalid error names, and fails the test for any
// other error.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	require.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	var fields []string
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			fields = append(fields, c.Field)
		}
	}
	return fields
}
