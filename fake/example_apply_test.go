package fake_test

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// Apply writes test fixtures the way users write them: a YAML stream, created in order with
// the API server's rules (the namespace must come first), a Cluster's status included.
// Applying again replaces what exists, as a user editing the file would.
func ExampleCluster_Apply() {
	ctx := context.Background()
	host := fake.NewHost("host")
	err := host.Apply(`
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: eu, labels: {region: europe-west1}}
spec: {apiEndpoint: "https://eu.example"}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec: {template: {spec: {replicas: 3}}, placement: {clusters: [{name: eu}]}}
`)
	fmt.Println("applied:", err)

	u, _ := host.Get(ctx, federation.ClusterGVR, "", "eu")
	c, _ := federation.ClusterFromUnstructured(u)
	fmt.Println("eu:", c.Status.Conditions[0].Type, c.Status.Conditions[0].Status)

	err = host.Apply(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment,
  metadata: {name: web, namespace: shop}, spec: {template: {spec: {replicas: 5}}}}`)
	u, _ = host.Get(ctx, federation.DeploymentType.FederatedGVR(), "shop", "web")
	fmt.Println("replaced:", err, "generation", u.GetGeneration(), "placement", u.Object["spec"].(map[string]any)["placement"])

	err = host.Apply(`{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: staging}}`)
	fmt.Println(err)
	// Output:
	// applied: <nil>
	// eu: Ready True
	// replaced: <nil> generation 2 placement <nil>
	// fake: apply document 1 (ConfigMap staging/settings): namespaces "staging" not found
}
