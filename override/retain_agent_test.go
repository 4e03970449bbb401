package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/override"
)

// TestRendererRetain: Retain, Render's retention step on an object rendered elsewhere (a
// pull cluster's Assignment), keeps what the member owns (resourceVersion, a Service's
// clusterIP, labels member controllers added) and leaves desired as it was.
func TestRendererRetain(t *testing.T) {
	desired := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(80)}}},
	}}
	before := desired.DeepCopy()
	existing := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "default", "resourceVersion": "42",
			"labels": map[string]any{"app": "web", "mesh": "on"}},
		"spec": map[string]any{"clusterIP": "10.0.0.7", "clusterIPs": []any{"10.0.0.7"}, "ports": []any{map[string]any{"port": int64(80)}}},
	}}
	var r override.Renderer
	got, err := r.Retain(desired, existing)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "default", "resourceVersion": "42",
			"labels": map[string]any{"app": "web", "mesh": "on"}},
		"spec": map[string]any{"clusterIP": "10.0.0.7", "clusterIPs": []any{"10.0.0.7"}, "ports": []any{map[string]any{"port": int64(80)}}},
	}
	if diff := cmp.Diff(want, got.Object); diff != "" {
		t.Errorf("Retain (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before.Object, desired.Object); diff != "" {
		t.Errorf("Retain changed desired (-before +after):\n%s", diff)
	}
}
