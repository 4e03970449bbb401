package status_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// deploymentRules are DeploymentStatus's rules in CEL, for BenchmarkDeploymentExtractor: the
// same counts and readiness (observed generation caught up, every desired replica updated
// and available, no old one left, no ProgressDeadlineExceeded).
var deploymentRules = federation.KindRules{
	ObservedGeneration: "has(self.status.observedGeneration) ? self.status.observedGeneration : 0",
	ReadyReplicas:      "has(self.status.readyReplicas) ? self.status.readyReplicas : 0",
	AvailableReplicas:  "has(self.status.availableReplicas) ? self.status.availableReplicas : 0",
	UpdatedReplicas:    "has(self.status.updatedReplicas) ? self.status.updatedReplicas : 0",
	Ready: `(has(self.spec.replicas) ? self.spec.replicas : 1) <= (has(self.status.updatedReplicas) ? self.status.updatedReplicas : 0) &&
	        (has(self.status.replicas) ? self.status.replicas : 0) <= (has(self.status.updatedReplicas) ? self.status.updatedReplicas : 0) &&
	        (has(self.spec.replicas) ? self.spec.replicas : 1) <= (has(self.status.availableReplicas) ? self.status.availableReplicas : 0) &&
	        !(has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'Progressing' && c.reason == 'ProgressDeadlineExceeded'))`,
}

// BenchmarkDeploymentExtractor compares the built-in Go extractor of a Deployment with the
// same rules in CEL (RulesExtractor), on a ready Deployment with two conditions.
func BenchmarkDeploymentExtractor(b *testing.B) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(4)},
		"spec":     map[string]any{"replicas": int64(6), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}},
		"status": map[string]any{"observedGeneration": int64(4), "replicas": int64(6), "readyReplicas": int64(6), "availableReplicas": int64(6), "updatedReplicas": int64(6),
			"conditions": []any{
				map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
				map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
			}},
	}}
	typ := federation.DeploymentType
	typ.Rules = &deploymentRules
	for _, bc := range []struct {
		name string
		x    status.Extractor
	}{
		{"go", status.DeploymentStatus},
		{"generic", status.GenericStatus}, // the defaults RulesExtractor starts from
		{"cel", status.RulesExtractor(typ)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o, err := bc.x(obj)
			if err != nil || !o.Ready || o.AvailableReplicas == nil || *o.AvailableReplicas != 6 {
				b.Fatalf("%s: %+v, %v; want ready, 6 available", bc.name, o, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.x(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
