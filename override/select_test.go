package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
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

// TestSelectorMatchesLabelSelectorAsSelector checks the allocation-free selector matching
// against the API machinery's on every combination of a few selectors and label sets.
func TestSelectorMatchesLabelSelectorAsSelector(t *testing.T) {
	selectors := []string{
		`{}`, `{matchLabels: {a: "1"}}`, `{matchLabels: {a: "1", b: "2"}}`,
		`{matchExpressions: [{key: a, operator: In, values: ["1", "2"]}]}`,
		`{matchExpressions: [{key: a, operator: NotIn, values: ["1"]}]}`,
		`{matchExpressions: [{key: b, operator: Exists}]}`,
		`{matchExpressions: [{key: b, operator: DoesNotExist}]}`,
		`{matchLabels: {a: "2"}, matchExpressions: [{key: b, operator: Exists}, {key: c, operator: NotIn, values: [x]}]}`,
	}
	labelSets := []map[string]string{nil, {"a": "1"}, {"a": "2"}, {"a": "1", "b": "2"}, {"a": "2", "b": "", "c": "x"}, {"a": "2", "b": "y"}, {"c": "y"}}
	for _, s := range selectors {
		var sel metav1.LabelSelector
		require.NoError(t, yaml.Unmarshal([]byte(s), &sel))
		ref, err := metav1.LabelSelectorAsSelector(&sel)
		require.NoError(t, err)
		for _, l := range labelSets {
			list := []federation.ClusterOverride{{ClusterSelector: &sel}}
			got, err := override.ForCluster(list, "c", l)
			require.NoError(t, err)
			if want := ref.Matches(labels.Set(l)); want != (len(got) == 1) {
				t.Errorf("selector %s on labels %v: matched = %v; want %v", s, l, len(got) == 1, want)
			}
		}
	}
}
