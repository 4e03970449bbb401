package preview_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/preview"
)

// A dry run of the specification's example: where app-frontend goes, with how many
// replicas and why, and what is worth a look, without a cluster.
func ExampleRun() {
	in, err := preview.Decode([]byte(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    spec:
      replicas: 6
      selector: {matchLabels: {app: frontend}}
      template: {metadata: {labels: {app: frontend}}, spec: {containers: [{name: nginx, image: "nginx:1.25"}]}}
  placement: {clusters: [{name: cluster-aws-us-east}, {name: cluster-gcp-eu-west}]}
  overrides:
  - clusterName: cluster-gcp-eu-west
    clusterOverrides: [{op: replace, path: /spec/replicas, value: 4}]
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 9
  clusters:
    "*": {weight: 1}
    cluster-aws-us-east: {minReplicas: 2, maxReplicas: 6, weight: 2}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: cluster-aws-us-east}
spec: {apiEndpoint: "https://aws.example.com", region: us-east-1, zones: [us-east-1a]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: cluster-gcp-eu-west}
spec: {apiEndpoint: "https://gcp.example.com", region: europe-west1, zones: [europe-west1-b]}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	in.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	in.AssumeReady = true // these Clusters carry no status
	rep, err := preview.Run(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range rep.Objects {
		fmt.Println(o.Kind, o.Namespace+"/"+o.Name, o.Scheduled.Reason)
		for _, c := range o.Clusters {
			replicas, _, _ := unstructured.NestedInt64(c.Manifest.Object, "spec", "replicas")
			fmt.Printf("  %s: scheduled %d, runs %d: %s\n", c.Name, *c.Replicas, replicas, c.Explanation)
		}
		for _, p := range o.Problems {
			fmt.Println(" ", p)
		}
	}
	// Output:
	// FederatedDeployment production/app-frontend Scheduled
	//   cluster-aws-us-east: scheduled 6, runs 6: cluster-aws-us-east: 6 = min 2 + weight 4 (weight 2)
	//   cluster-gcp-eu-west: scheduled 3, runs 4: cluster-gcp-eu-west: 3 = min 1 + weight 2 (weight 1 from "*")
	//   Warning: FederatedDeployment production/app-frontend: spec.overrides[0].clusterOverrides[0]: cluster "cluster-gcp-eu-west": the member runs 4 replicas, not the 3 the ReplicaSchedulingPreference scheduled: an override replaces /spec/replicas
}

// Which clusters a new revision reaches in which stage of spec.rollout, and what each stage
// waits for. The object is as the host holds it after revision 1 was synced, with its spec
// changed since (generation 2): sync records revision 2 and takes it through the stages.
func ExampleRun_rollout() {
	in, err := preview.Decode([]byte(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop, generation: 2, annotations: {federation.k8s.io/revision: "1"}}
spec:
  template: {spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: "web:2"}]}}}}
  placement: {clusterSelector: {}}
  rollout:
    stages:
    - {name: canary, clusters: [us-1], minReadySeconds: 300}
    - {name: europe, clusterSelector: {matchLabels: {topology.kubernetes.io/region: eu}}}
    - {percentage: 100}
status: {observedGeneration: 1, syncedRevision: 1}
---
{apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: us-1, labels: {topology.kubernetes.io/region: us}}, spec: {apiEndpoint: "https://us-1"}}
---
{apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: us-2, labels: {topology.kubernetes.io/region: us}}, spec: {apiEndpoint: "https://us-2"}}
---
{apiVersion: core.federation.k8s.io/v1alpha1, kind: Cluster, metadata: {name: eu-1, labels: {topology.kubernetes.io/region: eu}}, spec: {apiEndpoint: "https://eu-1"}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	in.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	in.AssumeReady = true
	rep, err := preview.Run(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	ro := rep.Objects[0].Rollout
	fmt.Println(ro.Note)
	for i, s := range ro.Stages {
		fmt.Printf("%d %s: %v (min ready %ds, deadline %ds)\n", i+1, s.Name, s.Clusters, s.MinReadySeconds, s.ProgressDeadlineSeconds)
	}
	// Output:
	// revision 2 goes stage by stage; each cluster keeps revision 1 until its stage starts
	// 1 canary: [us-1] (min ready 300s, deadline 600s)
	// 2 europe: [eu-1] (min ready 0s, deadline 600s)
	// 3 stage-3: [us-2] (min ready 0s, deadline 600s)
}
