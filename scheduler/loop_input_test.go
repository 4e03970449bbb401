package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// TestReconcileIntersectReportsFilteredClusters: with intersectWithClusterSelector, a cluster
// the placement lists but the preference does not cover exists: it is left out by the
// preference, not "unknown".
func TestReconcileIntersectReportsFilteredClusters(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("1"))
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 4, intersectWithClusterSelector: true, clusters: {aws: {weight: 1}, gcp: {weight: 1}}}
`)
	_, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	obj := e.get(t)
	require.Equal(t, map[string]int64{"aws": 2, "gcp": 2}, schedule(obj))
	msg := scheduled(obj).Message
	require.NotContains(t, msg, "unknown")
	require.Contains(t, msg, `azure: Preference: the ReplicaSchedulingPreference has no entry for it (neither "azure" nor "*" in spec.clusters)`)

	x, err := e.s.Explain(ctx, web)
	require.NoError(t, err)
	why, ok := x.Placement.Why("azure")
	require.True(t, ok)
	require.Empty(t, x.Placement.Unknown)
	require.Equal(t, "Preference", why.Rule.String())
}

// TestReconcileNegativeTemplateReplicas: a template's replicas that are negative or not an
// integer make the object invalid, not "1 replica, Scheduled".
func TestReconcileNegativeTemplateReplicas(t *testing.T) {
	for _, replicas := range []string{"-3", "2.5", `"two"`} {
		t.Run(replicas, func(t *testing.T) {
			e := newEnv(t, federation.DeploymentType)
			e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment(replicas))
			_, err := e.s.Reconcile(ctx, web)
			require.Error(t, err)
			require.True(t, federation.IsTerminal(err), "an invalid object is not worth retrying: %v", err)
			require.ErrorIs(t, err, federation.ErrInvalidObject)
			obj := e.get(t)
			require.Nil(t, obj.Status.Schedule, "nothing is scheduled from an invalid template")
			c := scheduled(obj)
			require.Equal(t, metav1.ConditionFalse, c.Status)
			require.Equal(t, scheduler.ReasonInvalidObject, c.Reason)
			require.Contains(t, c.Message, "FederatedDeployment default/web is invalid: spec.template.spec.replicas")
		})
	}
}

// spreadEnv is a host with four Ready clusters in two regions and two providers.
func spreadEnv(t *testing.T) *env {
	t.Helper()
	e := &env{host: fake.NewHost("host"), clock: clocktesting.NewFakeClock(now)}
	fleet := fake.NewFleet()
	fleet.Add("us-aws", map[string]string{federation.RegionLabel: "us", federation.ProviderLabel: "aws"})
	fleet.Add("us-gcp", map[string]string{federation.RegionLabel: "us", federation.ProviderLabel: "gcp"})
	fleet.Add("eu-aws", map[string]string{federation.RegionLabel: "eu", federation.ProviderLabel: "aws"})
	fleet.Add("eu-gcp", map[string]string{federation.RegionLabel: "eu", federation.ProviderLabel: "gcp"})
	require.NoError(t, fleet.Register(ctx, e.host))
	s, err := scheduler.New(e.host, federation.DeploymentType, scheduler.Options{Clock: e.clock})
	require.NoError(t, err)
	e.s = s
	return e
}

// spreadDeployment selects every cluster with the given spread constraints (a YAML list).
func spreadDeployment(constraints string) string {
	return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template: {spec: {replicas: 1}}
  placement: {clusterSelector: {}, spreadConstraints: ` + constraints + `}
`
}

// TestReconcileSpreadConstraints: every constraint is honoured (the cluster half by
// placement, maxSkew by the division) or rejected with its field path.
func TestReconcileSpreadConstraints(t *testing.T) {
	const heavyUS = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 12, rebalance: true, clusters: {"*": {weight: 1}, us-aws: {weight: 8}, us-gcp: {weight: 8}}}
`
	t.Run("maxSkew of the second constraint bounds replicas", func(t *testing.T) {
		e := spreadEnv(t)
		e.apply(t, federation.DeploymentType.FederatedGVR(), spreadDeployment(`[{topologyKey: provider, minGroups: 2}, {topologyKey: region, maxSkew: 1}]`))
		e.apply(t, federation.ReplicaSchedulingPreferenceGVR, heavyUS)
		_, err := e.s.Reconcile(ctx, web)
		require.NoError(t, err)
		got := schedule(e.get(t))
		// An even share is 6 per region; maxSkew 1 caps us at 7.
		require.Equal(t, int64(7), got["us-aws"]+got["us-gcp"], "schedule %v", got)
		require.Equal(t, int64(5), got["eu-aws"]+got["eu-gcp"], "schedule %v", got)
	})
	t.Run("two constraints with maxSkew are invalid", func(t *testing.T) {
		e := spreadEnv(t)
		e.apply(t, federation.DeploymentType.FederatedGVR(), spreadDeployment(`[{topologyKey: provider, maxSkew: 2}, {topologyKey: region, maxSkew: 1}]`))
		e.apply(t, federation.ReplicaSchedulingPreferenceGVR, heavyUS)
		_, err := e.s.Reconcile(ctx, web)
		require.True(t, federation.IsTerminal(err), "%v", err)
		c := scheduled(e.get(t))
		require.Equal(t, scheduler.ReasonInvalidPlacement, c.Reason)
		require.Contains(t, c.Message, "spec.placement.spreadConstraints[1].maxSkew: Forbidden")
	})
	t.Run("maxSkew with KubeFed's planner is invalid", func(t *testing.T) {
		e := spreadEnv(t)
		e.apply(t, federation.DeploymentType.FederatedGVR(), spreadDeployment(`[{topologyKey: region, maxSkew: 1}]`))
		e.apply(t, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 12, algorithm: KubeFed, clusters: {"*": {weight: 1}}}
`)
		_, err := e.s.Reconcile(ctx, web)
		require.True(t, federation.IsTerminal(err), "%v", err)
		c := scheduled(e.get(t))
		require.Equal(t, scheduler.ReasonInvalidPreference, c.Reason)
		require.Contains(t, c.Message, `spec.algorithm: Invalid value: "KubeFed": cannot honour spec.placement.spreadConstraints[0].maxSkew of FederatedDeployment default/web`)
	})
	t.Run("two minGroups and maxClusters", func(t *testing.T) {
		e := spreadEnv(t)
		e.apply(t, federation.DeploymentType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template: {spec: {replicas: 1}}
  placement: {clusterSelector: {}, maxClusters: 2, spreadConstraints: [{topologyKey: region, minGroups: 2}, {topologyKey: provider, minGroups: 2}]}
`)
		_, err := e.s.Reconcile(ctx, web)
		require.NoError(t, err)
		obj := e.get(t)
		require.Equal(t, map[string]int64{"eu-aws": 1, "us-gcp": 1}, schedule(obj))
		require.Equal(t, metav1.ConditionTrue, scheduled(obj).Status, scheduled(obj).Message)
	})
}

func TestRequestFor(t *testing.T) {
	rsp := &federation.ReplicaSchedulingPreference{Spec: federation.ReplicaSchedulingPreferenceSpec{
		TotalReplicas: 9, Rebalance: true, Algorithm: "KubeFed", Strategy: "Duplicated",
		Clusters: map[string]federation.ClusterPreferences{"*": {Weight: 1}},
	}}
	clusters := []scheduler.ClusterState{{Name: "a"}}
	req := scheduler.RequestFor(federation.Key{Namespace: "ns", Name: "web"}, rsp, clusters)
	want := scheduler.Request{Key: "ns/web", TotalReplicas: 9, Clusters: clusters, Preferences: rsp.Spec.Clusters,
		Rebalance: true, Algorithm: federation.AlgorithmKubeFed, Strategy: federation.StrategyDuplicated}
	if diff := cmp.Diff(want, req); diff != "" {
		t.Errorf("RequestFor() (-want +got):\n%s", diff)
	}

	// Unknown names reach Divide, which names the field.
	rsp.Spec.Algorithm = "Nope"
	_, err := scheduler.Divide(scheduler.RequestFor(federation.Key{Name: "x"}, rsp, nil))
	require.ErrorIs(t, err, scheduler.ErrInvalidRequest)
	require.ErrorContains(t, err, `spec.algorithm: Unsupported value: "Nope": supported values: "Webster", "KubeFed"`)
	rsp.Spec.Algorithm, rsp.Spec.Strategy = "", "Nope"
	_, err = scheduler.Divide(scheduler.RequestFor(federation.Key{Name: "x"}, rsp, nil))
	require.ErrorIs(t, err, scheduler.ErrInvalidRequest)
	require.ErrorContains(t, err, `spec.strategy: Unsupported value: "Nope"`)
}
