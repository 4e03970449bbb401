// Package strategytest shows how to unit-test a placement strategy: the objects as you
// would apply them, on an in-memory host, through the real Scheduler loop. Copy this file
// next to your own strategies and change the YAML and the expected schedules.
package strategytest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// fleet is three Ready member clusters, as the cluster monitor would describe them.
const fleet = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: cluster-aws-us-east, labels: {provider: aws}}
spec: {apiEndpoint: "https://aws.example", region: us-east-1}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: cluster-gcp-eu-west, labels: {provider: gcp}}
spec: {apiEndpoint: "https://gcp.example", region: europe-west1}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: cluster-azure-southeastasia, labels: {provider: azure}}
spec: {apiEndpoint: "https://azure.example", region: southeastasia}
status: {conditions: [{type: Ready, status: "True"}]}
`

// frontend is the workload and the strategy under test: 9 replicas, AWS weighted twice
// and held between 2 and 6.
const frontend = `
apiVersion: v1
kind: Namespace
metadata: {name: production}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template: {spec: {replicas: 6}}
  placement: {clusterSelector: {}}
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
`

// The whole test: apply the objects, run one scheduling pass, compare the schedule.
func TestFrontendStrategy(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	require.NoError(t, host.Apply(fleet+"---"+frontend))
	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
	require.NoError(t, err)
	key := federation.Key{Namespace: "production", Name: "app-frontend"}
	_, err = s.Reconcile(ctx, key)
	require.NoError(t, err)

	u, err := host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	want := map[string]int64{"cluster-aws-us-east": 5, "cluster-gcp-eu-west": 2, "cluster-azure-southeastasia": 2}
	if diff := cmp.Diff(want, obj.Status.Schedule.Replicas()); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
}
