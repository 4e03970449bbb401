package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// shopObject is web in default with the given placement (a YAML flow mapping), 3 replicas.
func shopObject(placement string) string {
	return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template: {spec: {replicas: 3}}
  placement: ` + placement + "\n"
}

// shopPreference is web's preference with the given spec fields (a YAML flow mapping body).
func shopPreference(fields string) string {
	return `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 6, ` + fields + "}\n"
}

// TestScheduledMessageSaysWhatWasIgnored: the traps that schedule without an error are said in
// the Scheduled message: a cluster name that no Cluster has (placement or preference), and a
// preference that set the placement's clusters or selector aside (KubeFed's rule).
func TestScheduledMessageSaysWhatWasIgnored(t *testing.T) {
	const us = `{clusterSelector: {matchLabels: {topology.kubernetes.io/region: us-east-1}}}`
	cases := []struct {
		name      string
		manifests string
		want      map[string]int64
		warnings  []scheduler.Warning
		says      []string
		neverSays []string
	}{
		{
			name:      "placement names an unknown cluster",
			manifests: shopObject(`{clusters: [{name: aws}, {name: gpc}]}`),
			want:      map[string]int64{"aws": 3},
			warnings: []scheduler.Warning{{Reason: scheduler.WarningUnknownCluster, Kind: "FederatedDeployment", Field: "spec.placement.clusters", Clusters: []string{"gpc"},
				Message: `names no Cluster "gpc" (a typo, or a cluster not joined yet?): nothing is placed there`}},
			says: []string{`warning: spec.placement.clusters names no Cluster "gpc" (a typo, or a cluster not joined yet?): nothing is placed there`},
		},
		{
			name:      "preference names an unknown cluster",
			manifests: shopObject(`{clusterSelector: {}}`) + "---" + shopPreference(`clusters: {aws: {weight: 2}, gcp: {weight: 1}, azuer: {weight: 1}}`),
			want:      map[string]int64{"aws": 4, "gcp": 2},
			warnings: []scheduler.Warning{{Reason: scheduler.WarningUnknownCluster, Kind: "ReplicaSchedulingPreference", Field: "spec.clusters", Clusters: []string{"azuer"},
				Message: `names no Cluster "azuer" (a typo, or a cluster not joined yet?): its preferences apply to no cluster`}},
			says:      []string{`warning: the ReplicaSchedulingPreference's spec.clusters names no Cluster "azuer" (a typo, or a cluster not joined yet?): its preferences apply to no cluster`},
			neverSays: []string{"note:"},
		},
		{
			name:      "preference ignores the cluster selector",
			manifests: shopObject(us) + "---" + shopPreference(`clusters: {"*": {weight: 1}}`),
			want:      map[string]int64{"aws": 2, "azure": 2, "gcp": 2},
			warnings: []scheduler.Warning{{Reason: scheduler.WarningPlacementIgnored, Kind: "FederatedDeployment", Field: "spec.placement.clusterSelector", Clusters: []string{"azure", "gcp"},
				Message: "was ignored (it would leave out azure, gcp): a ReplicaSchedulingPreference chooses among every cluster unless its spec.intersectWithClusterSelector is true (KubeFed's rule)"}},
			says:      []string{"note: spec.placement.clusterSelector was ignored (it would leave out azure, gcp): a ReplicaSchedulingPreference chooses among every cluster unless its spec.intersectWithClusterSelector is true (KubeFed's rule)"},
			neverSays: []string{"warning:"},
		},
		{
			name:      "preference ignores the cluster list",
			manifests: shopObject(`{clusters: [{name: aws}, {name: gcp}]}`) + "---" + shopPreference(`clusters: {"*": {weight: 1}}`),
			want:      map[string]int64{"aws": 2, "azure": 2, "gcp": 2},
			warnings: []scheduler.Warning{{Reason: scheduler.WarningPlacementIgnored, Kind: "FederatedDeployment", Field: "spec.placement.clusters", Clusters: []string{"azure"},
				Message: "was ignored (it would leave out azure): a ReplicaSchedulingPreference chooses among every cluster unless its spec.intersectWithClusterSelector is true (KubeFed's rule)"}},
			says: []string{"note: spec.placement.clusters was ignored (it would leave out azure)"},
		},
		{
			name:      "preference intersects with the selector",
			manifests: shopObject(us) + "---" + shopPreference(`intersectWithClusterSelector: true, clusters: {"*": {weight: 1}}`),
			want:      map[string]int64{"aws": 6},
			neverSays: []string{"note:", "warning:"},
		},
		{
			name:      "ignored placement chose the same clusters",
			manifests: shopObject(`{clusters: [{name: aws}, {name: gcp}]}`) + "---" + shopPreference(`clusters: {aws: {weight: 1}, gcp: {weight: 1}}`),
			want:      map[string]int64{"aws": 3, "gcp": 3},
			neverSays: []string{"note:", "warning:"},
		},
		{
			// Every cluster gets the template's replicas: nothing is divided, so maxSkew
			// bounds nothing, which the message must say rather than drop in silence.
			name:      "maxSkew without a preference",
			manifests: shopObject(`{clusterSelector: {}, spreadConstraints: [{topologyKey: region, minGroups: 2, maxSkew: 1}]}`),
			want:      map[string]int64{"aws": 3, "azure": 3, "gcp": 3},
			warnings: []scheduler.Warning{{Reason: scheduler.WarningSpreadIgnored, Kind: "FederatedDeployment", Field: "spec.placement.spreadConstraints[0].maxSkew",
				Message: "bounds nothing: without a ReplicaSchedulingPreference no replicas are divided (every selected cluster gets the template's)"}},
			says: []string{"warning: spec.placement.spreadConstraints[0].maxSkew bounds nothing: without a ReplicaSchedulingPreference no replicas are divided (every selected cluster gets the template's)"},
		},
		{
			name:      "no membership rule: the preference alone chooses",
			manifests: shopObject(`{}`) + "---" + shopPreference(`clusters: {"*": {weight: 1}}`),
			want:      map[string]int64{"aws": 2, "azure": 2, "gcp": 2},
			neverSays: []string{"note:", "warning:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, federation.DeploymentType)
			require.NoError(t, e.host.Apply(tc.manifests))
			_, err := e.s.Reconcile(ctx, web)
			require.NoError(t, err)
			obj := e.get(t)
			if diff := cmp.Diff(tc.want, obj.Status.Schedule.Replicas()); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
			c := scheduled(obj)
			require.Equal(t, metav1.ConditionTrue, c.Status, c.Message)
			for _, s := range tc.says {
				require.Contains(t, c.Message, s)
			}
			for _, s := range tc.neverSays {
				require.NotContains(t, c.Message, s)
			}
			x, err := e.s.Explain(ctx, web)
			require.NoError(t, err)
			require.Equal(t, c.Message, x.Message, "Explain says what Reconcile wrote")
			if diff := cmp.Diff(tc.warnings, x.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			for _, w := range x.Warnings {
				require.Contains(t, c.Message, "; "+w.String(), "the message is built from the warnings")
			}
		})
	}
}

// TestRejectUnknownClusters: with the option, a name no Cluster has is an error naming the
// field and the cluster; the last good schedule stays until the Cluster exists.
func TestRejectUnknownClusters(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	s, err := scheduler.New(e.host, federation.DeploymentType, scheduler.Options{Clock: e.clock, RejectUnknownClusters: true})
	require.NoError(t, err)
	require.NoError(t, e.host.Apply(shopObject(`{clusters: [{name: aws}]}`)))
	_, err = s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 3}, e.get(t).Status.Schedule.Replicas())

	require.NoError(t, e.host.Apply(shopObject(`{clusters: [{name: aws}, {name: gpc}]}`)+"---"+
		shopPreference(`clusters: {aws: {weight: 1}, azuer: {weight: 1}, gpc: {weight: 1}}`)))
	_, err = s.Reconcile(ctx, web)
	require.Error(t, err)
	require.True(t, federation.IsTerminal(err), "retrying does not create the Cluster: %v", err)
	require.ErrorIs(t, err, federation.ErrInvalidObject)
	obj := e.get(t)
	require.Equal(t, map[string]int64{"aws": 3}, obj.Status.Schedule.Replicas(), "the last good schedule stays")
	c := scheduled(obj)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, scheduler.ReasonUnknownCluster, c.Reason)
	require.Equal(t, `FederatedDeployment default/web is invalid: spec.placement.clusters[1].name: Not found: "gpc": no such Cluster; `+
		`ReplicaSchedulingPreference default/web is invalid: [spec.clusters[azuer]: Not found: "azuer": no such Cluster, `+
		`spec.clusters[gpc]: Not found: "gpc": no such Cluster]`, c.Message)
	_, err = s.Explain(ctx, web)
	require.ErrorIs(t, err, federation.ErrInvalidObject, "Explain decides as Reconcile does")

	for _, name := range []string{"gpc", "azuer"} {
		e.createCluster(t, readyCluster(name))
	}
	_, err = s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 3, "gpc": 2, "azuer": 1}, e.get(t).Status.Schedule.Replicas(), "rebalance off: aws keeps its 3")
	require.Equal(t, scheduler.ReasonScheduled, scheduled(e.get(t)).Reason)
}

func readyCluster(name string) federation.Cluster {
	return federation.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: federation.ClusterGVR.GroupVersion().String(), Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       federation.ClusterSpec{APIEndpoint: "https://" + name + ".example"},
		Status: federation.ClusterStatus{Conditions: []metav1.Condition{{
			Type: federation.ConditionReady, Status: metav1.ConditionTrue, Reason: "Healthy", LastTransitionTime: metav1.NewTime(now)}}},
	}
}
