package override_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// TestReplicasField: the override that sets the replica count last, in the order Render
// applies them; Render's result is checked against it, so the two cannot disagree.
func TestReplicasField(t *testing.T) {
	eu := map[string]string{"region": "eu"}
	cases := []struct {
		name      string
		overrides string
		typ       federation.TypeConfig
		want      string // "" for none
		wantCount int64  // what Render writes, when want is not ""
	}{
		{name: "none", overrides: `[{clusterName: eu-1, images: [{tag: "1.28"}]}]`},
		{name: "a named operation", overrides: `[{clusterName: eu-1, clusterOverrides: [{path: /spec/replicas, value: 4}]}]`,
			want: "spec.overrides[0].clusterOverrides[0]", wantCount: 4},
		{name: "a selector's replicas overrider", overrides: `[{clusterSelector: {matchLabels: {region: eu}}, replicas: 5}]`,
			want: "spec.overrides[0].replicas", wantCount: 5},
		{name: "the named entry applies after the selector's, wherever it stands",
			overrides: `[{clusterName: eu-1, replicas: 2}, {clusterSelector: {matchLabels: {region: eu}}, clusterOverrides: [{op: add, path: /spec/replicas, value: 7}]}]`,
			want:      "spec.overrides[0].replicas", wantCount: 2},
		{name: "an entry's operations apply after its overriders",
			overrides: `[{clusterName: eu-1, replicas: 2, clusterOverrides: [{path: /spec/replicas, value: 3}, {op: test, path: /spec/replicas, value: 3}]}]`,
			want:      "spec.overrides[0].clusterOverrides[0]", wantCount: 3},
		{name: "an entry for another cluster", overrides: `[{clusterName: us-1, replicas: 2}, {clusterSelector: {matchLabels: {region: us}}, replicas: 3}]`},
		{name: "a type without replicas", overrides: `[{clusterName: eu-1, clusterOverrides: [{path: /spec/replicas, value: 4}]}]`, typ: federation.ConfigMapType},
		{name: "entries that cannot be selected", overrides: `[{clusterName: eu-1, replicas: 2}, {clusterName: eu-1, replicas: 3}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.typ.Federated.Kind == "" {
				tc.typ = federation.DeploymentType
			}
			var overrides []federation.ClusterOverride
			require.NoError(t, yaml.Unmarshal([]byte(tc.overrides), &overrides))
			got := override.ReplicasField(overrides, tc.typ, "eu-1", eu)
			if tc.want == "" {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, tc.want, got.String())

			obj := webWith(t, webTemplate, tc.overrides)
			in := override.InputFor(obj, tc.typ)
			in.ClusterName, in.ClusterLabels = "eu-1", eu
			one := int64(1)
			in.Replicas = &one
			u, err := override.Render(in)
			require.NoError(t, err)
			n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			require.Equal(t, tc.wantCount, n, "Render writes the count of the field named")
		})
	}
}
