package federation_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

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
