package override_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// Validate is the dry run an admission webhook or an embedder calls before storing a
// federated object: federation's validation, then a render for every cluster. The override
// below passes validation (its path is well formed) but the template has no spec.paused, so
// sync could never render it for the European clusters.
func ExampleValidate() {
	var obj federation.FederatedObject
	_ = yaml.Unmarshal([]byte(`
metadata: {name: web, namespace: shop}
spec:
  template: {spec: {replicas: 3, template: {spec: {containers: [{name: app, image: "nginx:1.27"}]}}}}
  placement: {clusterSelector: {}}
  overrides:
  - clusterSelector: {matchLabels: {region: eu}}
    clusterOverrides:
    - {op: remove, path: /spec/paused}
`), &obj)
	fmt.Println("validation alone:", federation.ValidateFederatedObject(&obj))

	clusters := []federation.Cluster{
		{ObjectMeta: metav1.ObjectMeta{Name: "us-1", Labels: map[string]string{"region": "us"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Labels: map[string]string{"region": "eu"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eu-2", Labels: map[string]string{"region": "eu"}}},
	}
	for _, err := range override.Validate(&obj, federation.DeploymentType, clusters).Errors() {
		fmt.Println(err)
	}
	// Output:
	// validation alone: []
	// spec.overrides[0].clusterOverrides[0].path: Invalid value: "/spec/paused": clusters "eu-1", "eu-2": remove /spec/paused: override: path not found: no member "paused" to remove
}
