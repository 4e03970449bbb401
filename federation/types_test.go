package federation_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

func TestScheduleReplicas(t *testing.T) {
	cases := []struct {
		name     string
		schedule *federation.Schedule
		want     map[string]int64
	}{
		{"not scheduled", nil, nil},
		{"scheduled nowhere", &federation.Schedule{}, map[string]int64{}},
		{"clusters", &federation.Schedule{Clusters: []federation.ScheduledCluster{{Name: "us", Replicas: 3}, {Name: "eu", Replicas: 0}}},
			map[string]int64{"us": 3, "eu": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.schedule.Replicas()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Replicas() (-want +got):\n%s", diff)
			}
			if (got == nil) != (tc.want == nil) {
				t.Errorf("Replicas() = %#v; want %#v (nil means not scheduled)", got, tc.want)
			}
		})
	}
}

func TestClusterTopology(t *testing.T) {
	labels := map[string]string{federation.RegionLabel: "label-r", federation.ZoneLabel: "label-z", federation.ProviderLabel: "label-p"}
	for _, tc := range []struct {
		name     string
		c        federation.Cluster
		region   string
		zones    []string
		provider string
	}{
		{"nothing known", federation.Cluster{}, "", nil, ""},
		{"labels", federation.Cluster{ObjectMeta: metav1.ObjectMeta{Labels: labels}}, "label-r", []string{"label-z"}, "label-p"},
		{"status wins over labels", federation.Cluster{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Status: federation.ClusterStatus{Region: "status-r", Zones: []string{"s1", "s2"}}}, "status-r", []string{"s1", "s2"}, "label-p"},
		{"spec wins over all", federation.Cluster{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:   federation.ClusterSpec{Region: "spec-r", Zones: []string{"a"}, Provider: "aws"},
			Status: federation.ClusterStatus{Region: "status-r", Zones: []string{"s1"}}}, "spec-r", []string{"a"}, "aws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []any{tc.c.Region(), tc.c.Zones(), tc.c.Provider()}
			if diff := cmp.Diff([]any{tc.region, tc.zones, tc.provider}, got); diff != "" {
				t.Errorf("topology (-want +got):\n%s", diff)
			}
		})
	}
	c := federation.Cluster{Spec: federation.ClusterSpec{Zones: []string{"a"}}}
	c.Zones()[0] = "changed"
	if c.Spec.Zones[0] != "a" {
		t.Error("Zones returned the spec's own slice")
	}
}

// TestPlacementClustersPresence checks that `clusters: []` (select nothing) and an absent
// `clusters` (defer to the selector) stay distinguishable through every representation.
func TestPlacementClustersPresence(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantNil   bool
		wantCount int
	}{
		{name: "absent", yaml: "spec: {placement: {clusterSelector: {}}}", wantNil: true},
		{name: "null", yaml: "spec: {placement: {clusters: null}}", wantNil: true},
		{name: "empty", yaml: "spec: {placement: {clusters: []}}", wantNil: false},
		{name: "two", yaml: "spec: {placement: {clusters: [{name: a}, {name: b}]}}", wantCount: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "apiVersion: types.federation.k8s.io/v1alpha1\nkind: FederatedDeployment\nmetadata: {name: x, namespace: y}\n" + tc.yaml
			check := func(stage string, obj *federation.FederatedObject) {
				t.Helper()
				got := obj.Spec.Placement.Clusters
				if (got == nil) != tc.wantNil || len(got) != tc.wantCount {
					t.Fatalf("%s: clusters = %#v; want nil=%v len=%d", stage, got, tc.wantNil, tc.wantCount)
				}
			}
			var obj federation.FederatedObject
			require.NoError(t, yaml.Unmarshal([]byte(src), &obj))
			check("decode", &obj)
			check("deepcopy", obj.DeepCopy())

			u, err := federation.ToUnstructured(&obj)
			require.NoError(t, err)
			back, err := federation.FederatedObjectFromUnstructured(u)
			require.NoError(t, err)
			check("unstructured round trip", back)

			data, err := json.Marshal(back)
			require.NoError(t, err)
			var again federation.FederatedObject
			require.NoError(t, json.Unmarshal(data, &again))
			check("json round trip", &again)
			if diff := cmp.Diff(obj.Spec, again.Spec); diff != "" {
				t.Errorf("spec changed through the round trips (-want +got):\n%s", diff)
			}
		})
	}
}
