package dependencies

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestClusterChanged: a pass over every namespace with workloads follows a Cluster's labels,
// spec and readiness, not its heartbeats and capacity, which the monitor refreshes often.
func TestClusterChanged(t *testing.T) {
	base := `{apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: eu, labels: {env: prod}},
  spec: {apiEndpoint: "https://eu"}, status: {lastHeartbeatTime: "2026-01-01T00:00:00Z", available: {cpu: "4"},
  conditions: [{type: Ready, status: "True", reason: Probed, lastTransitionTime: "2026-01-01T00:00:00Z"}]}}`
	decode := func(doc string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, tc := range []struct {
		name string
		edit func(u *unstructured.Unstructured)
		want bool
	}{
		{"a heartbeat", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "2026-01-01T00:01:00Z", "status", "lastHeartbeatTime")
		}, false},
		{"capacity", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "3", "status", "available", "cpu")
		}, false},
		{"a label", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"env": "dev"}) }, true},
		{"a taint", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"key": "gpu", "effect": "NoSchedule"}}, "spec", "taints")
		}, true},
		{"not Ready", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "False"}}, "status", "conditions")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, next := decode(base), decode(base)
			tc.edit(next)
			if got := clusterChanged(old, next); got != tc.want {
				t.Errorf("clusterChanged() = %v; want %v", got, tc.want)
			}
		})
	}
}
