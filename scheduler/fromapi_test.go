package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

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
