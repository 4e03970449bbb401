package dnsrecord

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// TestClusterChanged: Run reconciles every record on a Cluster change only when it changes
// what the DNS loop reads (readiness, region, zones, where the member is reached, deletion),
// not on the cluster monitor's heartbeats, which rewrite available, capacity, the version and
// the conditions' times and messages.
func TestClusterChanged(t *testing.T) {
	const base = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: east-a, labels: {topology.kubernetes.io/region: us-east-1}}
spec: {apiEndpoint: "https://10.0.0.1:6443"}
status:
  zones: [us-east-1a]
  kubernetesVersion: v1.37.2
  capacity: {cpu: "8"}
  available: {cpu: "4"}
  lastHeartbeatTime: "2026-11-30T12:00:00Z"
  conditions:
  - {type: Ready, status: "True", reason: ClusterReady, message: ok, lastTransitionTime: "2026-11-30T12:00:00Z"}
`
	tests := []struct {
		name   string
		mutate func(u map[string]any)
		want   bool
	}{
		{"nothing", func(map[string]any) {}, false},
		{"available only (every heartbeat)", func(u map[string]any) { status(u)["available"] = map[string]any{"cpu": "3"} }, false},
		{"capacity", func(u map[string]any) { status(u)["capacity"] = map[string]any{"cpu": "16"} }, false},
		{"heartbeat time", func(u map[string]any) { status(u)["lastHeartbeatTime"] = "2026-11-30T12:00:10Z" }, false},
		{"version", func(u map[string]any) { status(u)["kubernetesVersion"] = "v1.38.0" }, false},
		{"Ready's message and time", func(u map[string]any) {
			ready(u)["message"], ready(u)["lastTransitionTime"] = "still ok", "2026-11-30T12:01:00Z"
		}, false},
		{"a taint", func(u map[string]any) {
			u["spec"].(map[string]any)["taints"] = []any{map[string]any{"key": "k", "effect": "NoSchedule"}}
		}, false},
		{"Ready turns False", func(u map[string]any) { ready(u)["status"] = "False" }, true},
		{"the region label", func(u map[string]any) {
			u["metadata"].(map[string]any)["labels"] = map[string]any{"topology.kubernetes.io/region": "us-east-2"}
		}, true},
		{"spec.region overrides the label", func(u map[string]any) { u["spec"].(map[string]any)["region"] = "us-west-1" }, true},
		{"status.zones", func(u map[string]any) { status(u)["zones"] = []any{"us-east-1b"} }, true},
		{"the API endpoint", func(u map[string]any) { u["spec"].(map[string]any)["apiEndpoint"] = "https://10.0.0.2:6443" }, true},
		{"deletion", func(u map[string]any) {
			u["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-30T12:02:00Z"
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, next := &unstructured.Unstructured{}, &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(base), &old.Object); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(base), &next.Object); err != nil {
				t.Fatal(err)
			}
			tt.mutate(next.Object)
			if got := clusterChanged(nil, old, next); got != tt.want {
				t.Errorf("clusterChanged = %v, want %v", got, tt.want)
			}
		})
	}
}

// countingDecoder is a loop.ClusterDecoder that counts its decodes.
type countingDecoder struct {
	federation.Reader
	n int
}

func (d *countingDecoder) DecodeCluster(u *unstructured.Unstructured) (*federation.Cluster, error) {
	d.n++
	return federation.ClusterFromUnstructured(u)
}

// TestClusterChangedDecodesThroughTheCache: the DNS loop's Cluster predicate decodes both
// versions through the loop's reader (loop.DecodeCluster: once per resourceVersion for every
// loop of the Cache), as the other loops do, instead of decoding every update itself.
func TestClusterChangedDecodesThroughTheCache(t *testing.T) {
	old := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "1"}}}
	next := old.DeepCopy()
	next.SetResourceVersion("2")
	next.SetLabels(map[string]string{"topology.kubernetes.io/region": "eu-west-1"})
	d := &countingDecoder{}
	if !clusterChanged(d, old, next) {
		t.Error("a new region: clusterChanged = false, want true")
	}
	if d.n != 2 {
		t.Errorf("decodes through the loop's reader: %d, want 2 (both versions)", d.n)
	}
}

func status(u map[string]any) map[string]any { return u["status"].(map[string]any) }

func ready(u map[string]any) map[string]any {
	return status(u)["conditions"].([]any)[0].(map[string]any)
}
