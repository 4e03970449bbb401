package plan_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// Decide is sync's decision without any I/O: given the federated object, the Clusters and the
// member objects as read, what to do in each cluster and why. Here the object is placed in eu
// (absent there: create) and us (an object of the same name exists that the federation did
// not create: left alone), and no longer in ap, where the federation's copy is deleted.
func ExampleDecide() {
	var obj federation.FederatedObject
	_ = yaml.Unmarshal([]byte(`
metadata: {name: web, namespace: shop, generation: 1}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: "web:1"}]}}
  placement: {clusters: [{name: eu}, {name: us}]}
`), &obj)
	federation.DefaultFederatedObject(&obj)
	fleet := fake.NewFleet()
	for _, name := range []string{"ap", "eu", "us"} {
		fleet.Add(name, nil)
	}
	deployment := func(labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": labels}}}
	}

	d, err := plan.Decide(plan.Input{
		Type:     federation.DeploymentType,
		Object:   &obj,
		Clusters: fleet.Clusters(),
		Members: map[string]plan.MemberState{
			"ap": {Object: deployment(map[string]any{federation.ManagedByLabel: federation.ManagedByValue})},
			"eu": {},
			"us": {Object: deployment(nil)},
		},
		Revision: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range d.Changes {
		fmt.Printf("%s: %s", c.Cluster, c.Action)
		if c.Reason != "" {
			fmt.Printf(" (%s)", c.Reason)
		}
		fmt.Println()
	}
	// Output:
	// ap: Delete
	// eu: Create
	// us: None (AlreadyExists)
}
