package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

func TestNewClusterState(t *testing.T) {
	cost := resource.MustParse("0.5")
	c := federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu"}}
	c.Spec.Region, c.Spec.Cost = "eu-west-1", &cost
	got := scheduler.NewClusterState(&c, "region")
	want := scheduler.ClusterState{Name: "eu", Cost: ptr(500), Domain: "eu-west-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NewClusterState() (-want +got):\n%s", diff)
	}
	require.Equal(t, scheduler.ClusterState{Name: "eu", Cost: ptr(500)}, scheduler.NewClusterState(&c, ""))
}

func TestSpreadFor(t *testing.T) {
	sp, key := scheduler.SpreadFor(federation.Placement{})
	require.Nil(t, sp)
	require.Equal(t, "", key)
	sp, key = scheduler.SpreadFor(federation.Placement{SpreadConstraints: []federation.SpreadConstraint{
		{TopologyKey: "provider", MaxGroups: 2},
		{TopologyKey: "zone", MinGroups: 2, MaxSkew: 1},
	}})
	require.Equal(t, &scheduler.Spread{MinDomains: 2, MaxSkew: 1}, sp)
	require.Equal(t, "zone", key)
}

func TestRequestFor(t *testing.T) {
	rsp := &federation.ReplicaSchedulingPreference{Spec: federation.ReplicaSchedulingPreferenceSpec{
		TotalReplicas: 9, Rebalance: true, Algorithm: "KubeFed", Strategy: "Duplicated",
		Clusters: map[string]federation.ClusterPreferences{"*": {Weight: 1}},
	}}
	clusters := []scheduler.ClusterState{{Name: "a"}}
	req, err := scheduler.RequestFor(federation.Key{Namespace: "ns", Name: "web"}, rsp, clusters)
	require.NoError(t, err)
	want := scheduler.Request{Key: "ns/web", TotalReplicas: 9, Clusters: clusters, Preferences: rsp.Spec.Clusters,
		Rebalance: true, Algorithm: scheduler.KubeFed, Strategy: scheduler.Duplicated}
	if diff := cmp.Diff(want, req); diff != "" {
		t.Errorf("RequestFor() (-want +got):\n%s", diff)
	}
	rsp.Spec.Algorithm = "Nope"
	_, err = scheduler.RequestFor(federation.Key{Name: "x"}, rsp, nil)
	require.ErrorIs(t, err, scheduler.ErrInvalidRequest)
	rsp.Spec.Algorithm, rsp.Spec.Strategy = "", "Nope"
	_, err = scheduler.RequestFor(federation.Key{Name: "x"}, rsp, nil)
	require.ErrorIs(t, err, scheduler.ErrInvalidRequest)
}
