package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/placement"
)

func TestForCluster(t *testing.T) {
	const overrides = `
- {clusterName: eu-1, replicas: 1}
- {clusterSelector: {matchLabels: {region: eu}}, replicas: 2}
- {clusterSelector: {}, replicas: 3}
- {clusterSelector: {matchExpressions: [{key: tier, operator: NotIn, values: [gold]}]}, replicas: 4}
- {clusterName: us-1, replicas: 5}`
	var list []federation.ClusterOverride
	require.NoError(t, yaml.Unmarshal([]byte(overrides), &list))
	tests := []struct {
		name    string
		cluster string
		labels  map[string]string
		want    []int64 // the Replicas of the entries, in application order
	}{
		{name: "selectors in list order, then the named entry last", cluster: "eu-1", labels: map[string]string{"region": "eu"}, want: []int64{2, 3, 4, 1}},
		{name: "NotIn excludes", cluster: "eu-2", labels: map[string]string{"region": "eu", "tier": "gold"}, want: []int64{2, 3}},
		{name: "named entry without matching selectors", cluster: "us-1", labels: map[string]string{"tier": "gold"}, want: []int64{3, 5}},
		{name: "empty selector matches a cluster without labels", cluster: "x", want: []int64{3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := override.ForCluster(list, tc.cluster, tc.labels)
			require.NoError(t, err)
			var replicas []int64
			for _, o := range got {
				replicas = append(replicas, *o.Replicas)
			}
			if diff := cmp.Diff(tc.want, replicas); diff != "" {
				t.Errorf("ForCluster(%q) order mismatch (-want +got):\n%s", tc.cluster, diff)
			}
		})
	}
}

func TestForClusterErrors(t *testing.T) {
	tests := []struct {
		name, overrides string
	}{
		{name: "cluster named twice", overrides: `[{clusterName: a}, {clusterName: a}]`},
		{name: "name and selector", overrides: `[{clusterName: a, clusterSelector: {}}]`},
		{name: "neither", overrides: `[{replicas: 1}]`},
		{name: "bad operator", overrides: `[{clusterSelector: {matchExpressions: [{key: a, operator: Near}]}}]`},
		{name: "In without values", overrides: `[{clusterSelector: {matchExpressions: [{key: a, operator: In}]}}]`},
		{name: "Exists with values", overrides: `[{clusterSelector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]}}]`},
		{name: "invalid label key", overrides: `[{clusterSelector: {matchLabels: {"bad key!": x}}}]`},
		{name: "invalid label value", overrides: `[{clusterSelector: {matchLabels: {a: "not a value!"}}}]`},
		{name: "invalid key in an expression", overrides: `[{clusterSelector: {matchExpressions: [{key: "-a", operator: Exists}]}}]`},
		{name: "invalid value in an expression", overrides: `[{clusterSelector: {matchExpressions: [{key: a, operator: In, values: ["x y"]}]}}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var list []federation.ClusterOverride
			require.NoError(t, yaml.Unmarshal([]byte(tc.overrides), &list))
			_, err := override.ForCluster(list, "a", nil)
			require.ErrorIs(t, err, override.ErrInvalidOverride)
		})
	}
}

// TestSelectorSemantics: a cluster selector means what metav1.LabelSelectorAsSelector makes
// of it, in override, in placement and in validation alike. For every combination of a few
// selectors and label sets, ForCluster and placement.Select match exactly the clusters the
// API machinery's selector matches, and a selector it rejects is an error for all three.
func TestSelectorSemantics(t *testing.T) {
	selectors := []string{
		`{}`, `{matchLabels: {a: "1"}}`, `{matchLabels: {a: "1", b: "2"}}`,
		`{matchExpressions: [{key: a, operator: In, values: ["1", "2"]}]}`,
		`{matchExpressions: [{key: a, operator: NotIn, values: ["1"]}]}`,
		`{matchExpressions: [{key: b, operator: Exists}]}`,
		`{matchExpressions: [{key: b, operator: DoesNotExist}]}`,
		`{matchLabels: {a: "2"}, matchExpressions: [{key: b, operator: Exists}, {key: c, operator: NotIn, values: [x]}]}`,
		`{matchLabels: {example.com/a: "1"}}`,
		// Invalid: every user must reject these, not match or skip them.
		`{matchLabels: {"bad key!": x}}`,
		`{matchLabels: {a: "bad value!"}}`,
		`{matchLabels: {"": x}}`,
		`{matchExpressions: [{key: "a/b/c", operator: Exists}]}`,
		`{matchExpressions: [{key: a, operator: In}]}`,
		`{matchExpressions: [{key: a, operator: In, values: ["x y"]}]}`,
		`{matchExpressions: [{key: a, operator: DoesNotExist, values: [x]}]}`,
		`{matchExpressions: [{key: a, operator: Near, values: [x]}]}`,
	}
	labelSets := []map[string]string{nil, {"a": "1"}, {"a": "2"}, {"a": "1", "b": "2"}, {"a": "2", "b": "", "c": "x"}, {"a": "2", "b": "y"}, {"c": "y"}, {"example.com/a": "1"}}
	for _, s := range selectors {
		t.Run(s, func(t *testing.T) {
			var sel metav1.LabelSelector
			require.NoError(t, yaml.Unmarshal([]byte(s), &sel))
			ref, refErr := metav1.LabelSelectorAsSelector(&sel)
			list := []federation.ClusterOverride{{ClusterSelector: &sel}}
			errs := federation.ValidateOverrides(list, field.NewPath("spec", "overrides"))
			if (refErr != nil) != (len(errs) > 0) {
				t.Errorf("ValidateOverrides = %v; LabelSelectorAsSelector error = %v", errs, refErr)
			}
			for _, l := range labelSets {
				got, err := override.ForCluster(list, "c", l)
				_, placeErr := placement.Select(federation.Placement{ClusterSelector: &sel}, []federation.Cluster{cluster("c", l)})
				if refErr != nil {
					require.ErrorIs(t, err, override.ErrInvalidOverride, "ForCluster on labels %v", l)
					require.ErrorIs(t, placeErr, placement.ErrInvalidPlacement, "placement.Select on labels %v", l)
					continue
				}
				require.NoError(t, err)
				require.NoError(t, placeErr)
				if want := ref.Matches(labels.Set(l)); want != (len(got) == 1) {
					t.Errorf("ForCluster on labels %v: matched = %v; want %v", l, len(got) == 1, want)
				}
			}
		})
	}
}

// cluster is a ready Cluster with labels.
func cluster(name string, l map[string]string) federation.Cluster {
	c := federation.Cluster{}
	c.Name, c.Labels = name, l
	c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
	return c
}

// TestRenderNamesTheInvalidSelector: an invalid selector fails the render for every cluster
// (whether or not its labels would match), naming the entry.
func TestRenderNamesTheInvalidSelector(t *testing.T) {
	for _, l := range []map[string]string{nil, {"bad key!": "x"}} {
		in := webInput(t)
		in.ClusterLabels = l
		in.Overrides = append(in.Overrides, federation.ClusterOverride{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}})
		_, err := override.Render(in)
		require.ErrorIs(t, err, override.ErrInvalidOverride)
		require.ErrorContains(t, err, `override: render Deployment prod/web for cluster "eu-1": override: invalid override: `+
			`overrides[2].clusterSelector.matchLabels[bad key!]: Invalid value: "bad key!": name part must consist of`)
	}
}
