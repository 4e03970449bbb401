// Package strategytest shows how to unit-test a placement strategy: the objects as you
// would apply them, on an in-memory host, through the real Scheduler loop. Copy this file
// next to your own strategies and change the YAML and the expected schedules.
package strategytest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

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

// The same strategy under changes, table-driven: each case applies more YAML over the base
// (Apply replaces objects that exist) and says what the schedule and the Scheduled
// condition's message must be.
func TestFrontendStrategyVariants(t *testing.T) {
	cases := []struct {
		name    string
		change  string // YAML applied after fleet and frontend
		want    map[string]int64
		message string // a part of the Scheduled message
	}{
		{
			name: "a cluster that is not Ready gets nothing",
			change: `
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: cluster-azure-southeastasia, labels: {provider: azure}}
spec: {apiEndpoint: "https://azure.example", region: southeastasia}
status: {conditions: [{type: Ready, status: "False", reason: Unreachable}]}`,
			want:    map[string]int64{"cluster-aws-us-east": 6, "cluster-gcp-eu-west": 3},
			message: "cluster-azure-southeastasia: NotReady",
		},
		{
			name: "the preference ignores the placement's clusters (KubeFed's rule)",
			change: `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template: {spec: {replicas: 6}}
  placement: {clusters: [{name: cluster-aws-us-east}, {name: cluster-gcp-eu-west}]}`,
			want:    map[string]int64{"cluster-aws-us-east": 5, "cluster-gcp-eu-west": 2, "cluster-azure-southeastasia": 2},
			message: "note: spec.placement.clusters was ignored (it would leave out cluster-azure-southeastasia)",
		},
		{
			name: "unless it intersects with them",
			change: `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: app-frontend, namespace: production}
spec:
  template: {spec: {replicas: 6}}
  placement: {clusters: [{name: cluster-aws-us-east}, {name: cluster-gcp-eu-west}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: app-frontend, namespace: production}
spec:
  targetKind: FederatedDeployment
  totalReplicas: 9
  intersectWithClusterSelector: true
  clusters:
    "*": {weight: 1}
    cluster-aws-us-east: {minReplicas: 2, maxReplicas: 6, weight: 2}`,
			want:    map[string]int64{"cluster-aws-us-east": 6, "cluster-gcp-eu-west": 3},
			message: "9/9 replicas on 2 of 2 clusters",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			host := fake.NewHost("host")
			require.NoError(t, host.Apply(fleet+"---"+frontend+"---"+tc.change))
			s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
			require.NoError(t, err)
			key := federation.Key{Namespace: "production", Name: "app-frontend"}
			_, err = s.Reconcile(ctx, key)
			require.NoError(t, err)

			u, err := host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
			require.NoError(t, err)
			obj, err := federation.FederatedObjectFromUnstructured(u)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, obj.Status.Schedule.Replicas()); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
			scheduled := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionScheduled)
			require.NotNil(t, scheduled)
			require.Contains(t, scheduled.Message, tc.message)
		})
	}
}
