package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// TestReplicasOnlyForDivisibleTypes: a schedule (Input.Replicas) and spec.retainReplicas
// concern only types whose replicas are divided among clusters (TypeConfig.Divisible). A
// ConfigMap, Service, DaemonSet or Job renders the same object with or without them, and
// never gains a spec.replicas it has no field for.
func TestReplicasOnlyForDivisibleTypes(t *testing.T) {
	tests := []struct {
		name     string
		typ      federation.TypeConfig
		template string
	}{
		{name: "ConfigMap", typ: federation.ConfigMapType, template: `{data: {a: b}}`},
		{name: "Service", typ: federation.ServiceType, template: `{spec: {ports: [{port: 80}]}}`},
		{name: "DaemonSet", typ: federation.DaemonSetType, template: `{spec: {template: {spec: {containers: [{name: a, image: nginx}]}}}}`},
		{name: "Job", typ: federation.JobType, template: `{spec: {parallelism: 2, template: {spec: {containers: [{name: a, image: busybox}]}}}}`},
	}
	for _, tc := range tests {
		for _, existing := range []bool{false, true} {
			name := tc.name + "/create"
			if existing {
				name = tc.name + "/update"
			}
			t.Run(name, func(t *testing.T) {
				replicas := int64(3)
				in := override.Input{
					Key:         federation.Key{Namespace: "default", Name: "x"},
					Template:    obj(t, tc.template).Object,
					Type:        tc.typ,
					ClusterName: "eu-1",
				}
				if existing {
					// A member object with a replica count it should not have: retaining it
					// would copy the mistake.
					in.Existing = obj(t, `{metadata: {resourceVersion: "7"}, spec: {replicas: 5}}`)
					in.RetainReplicas = true
				}
				want, err := override.Render(in)
				require.NoError(t, err)
				in.Replicas = &replicas
				got, err := override.Render(in)
				require.NoError(t, err)
				if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "replicas"); found {
					t.Errorf("Render(%s with Replicas = 3) wrote spec.replicas: %v", tc.name, got.Object["spec"])
				}
				if diff := cmp.Diff(want.Object, got.Object); diff != "" {
					t.Errorf("Input.Replicas changed the rendering of a %s (-without +with):\n%s", tc.name, diff)
				}
			})
		}
	}

	// Control: a divisible type gets the schedule.
	replicas := int64(3)
	out, err := override.Render(override.Input{
		Key:      federation.Key{Namespace: "default", Name: "x"},
		Template: obj(t, `{spec: {replicas: 9}}`).Object,
		Type:     federation.DeploymentType,
		Replicas: &replicas,
	})
	require.NoError(t, err)
	require.Equal(t, int64(3), out.Object["spec"].(map[string]any)["replicas"])
}

// TestReplicasOverrideNeedsADivisibleType: a typed replicas override on a type without a
// replica count is an error naming the entry, not a spec.replicas written into a ConfigMap.
func TestReplicasOverrideNeedsADivisibleType(t *testing.T) {
	two := int64(2)
	in := override.Input{
		Key:         federation.Key{Namespace: "default", Name: "x"},
		Template:    obj(t, `{data: {a: b}}`).Object,
		Type:        federation.ConfigMapType,
		ClusterName: "eu-1",
		Overrides:   []federation.ClusterOverride{{ClusterName: "eu-1", Replicas: &two}},
	}
	_, err := override.Render(in)
	require.ErrorIs(t, err, override.ErrInvalidOverride)
	require.EqualError(t, err, `override: render ConfigMap default/x for cluster "eu-1": `+
		`override: invalid override: overrides[0].replicas: ConfigMap has no replica count (its TypeConfig has no ReplicasPath)`)
}

// TestReplicasField: the override that sets the replica count last, in the order Render
// applies them, and the count it sets (ReplicasOverride); Render's result is checked against
// both, so they cannot disagree.
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
			count, at, ok := override.ReplicasOverride(overrides, tc.typ, "eu-1", eu)
			require.Equal(t, got, at, "ReplicasField names the field ReplicasOverride reads")
			cl := federation.Cluster{}
			cl.Name, cl.Labels = "eu-1", eu
			all := override.ReplicasOverrides(overrides, tc.typ, []federation.Cluster{cl})
			if tc.want == "" {
				require.Nil(t, got)
				require.False(t, ok)
				require.Empty(t, all, "ReplicasOverrides agrees")
				return
			}
			require.Equal(t, map[string]int64{"eu-1": count}, all, "ReplicasOverrides agrees")
			require.NotNil(t, got)
			require.Equal(t, tc.want, got.String())
			require.True(t, ok)
			require.Equal(t, tc.wantCount, count)

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
