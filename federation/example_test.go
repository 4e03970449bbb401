package federation_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// A federated object is validated before any loop acts on it; every error names its field.
func ExampleValidateFederatedObject() {
	obj := &federation.FederatedObject{}
	_ = yaml.Unmarshal([]byte(`
spec:
  template: {spec: {replicas: 6}}
  placement: {clusters: [{name: cluster-aws-us-east}]}
  overrides:
  - clusterName: cluster-gcp-eu-west
    clusterOverrides:
    - {path: /spec/replicas, value: 4}
    - {path: /metadata/name, value: other}
  - clusterName: cluster-gcp-eu-west
    clusterOverrides:
    - {op: move, path: /spec/paused, value: true}
`), obj)
	for _, err := range federation.ValidateFederatedObject(obj) {
		fmt.Println(err)
	}
	// Output:
	// spec.overrides[0].clusterOverrides[1].path: Forbidden: /metadata/name identifies the object and cannot be overridden
	// spec.overrides[1].clusterName: Duplicate value: "cluster-gcp-eu-west"
	// spec.overrides[1].clusterOverrides[0].op: Unsupported value: "move": supported values: "add", "remove", "replace", "test"
}

// Any type can be federated, custom resources included: a TypeConfig names the target and
// derives its Federated<Kind>, whose CRD CRDFor builds.
func ExampleNewTypeConfig() {
	widget := federation.NewTypeConfig(
		schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "spec.replicas")
	crd, err := federation.CRDFor(widget)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(widget)
	fmt.Println(widget.FederatedGVR())
	fmt.Println(crd.Name, crd.Spec.Scope)
	// Output:
	// Widget.example.com/v1 -> FederatedWidget
	// types.federation.k8s.io/v1alpha1, Resource=federatedwidgets
	// federatedwidgets.types.federation.k8s.io Namespaced
}

// Placement keeps `clusters: []` (nothing) apart from an absent list (use the selector)
// through decoding, deep copy and unstructured conversion.
func ExampleToUnstructured() {
	for _, doc := range []string{
		`{kind: FederatedConfigMap, spec: {placement: {clusters: [], clusterSelector: {}}}}`,
		`{kind: FederatedConfigMap, spec: {placement: {clusterSelector: {}}}}`,
	} {
		obj := &federation.FederatedObject{}
		_ = yaml.Unmarshal([]byte(doc), obj)
		u, _ := federation.ToUnstructured(obj.DeepCopy())
		back, _ := federation.FederatedObjectFromUnstructured(u)
		fmt.Printf("clusters nil=%v len=%d\n", back.Spec.Placement.Clusters == nil, len(back.Spec.Placement.Clusters))
	}
	// Output:
	// clusters nil=false len=0
	// clusters nil=true len=0
}
