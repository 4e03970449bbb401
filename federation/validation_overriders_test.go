package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// TestValidateOverrides covers what makes a set of overrides ambiguous or malformed: a
// cluster named twice, a location written twice by one entry, and the typed overriders.
func TestValidateOverrides(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // "type field" of each error, in order
	}{
		{name: "valid layering: selector then name, same path", yaml: `
- clusterSelector: {matchLabels: {region: eu}}
  clusterOverrides: [{path: /spec/replicas, value: 2}]
- clusterName: eu-1
  clusterOverrides: [{path: /spec/replicas, value: 3}]`},
		{name: "cluster named twice", yaml: `
- {clusterName: a, clusterOverrides: [{path: /spec/replicas, value: 2}]}
- {clusterName: a, clusterOverrides: [{path: /spec/paused, value: true}]}`,
			want: []string{"FieldValueDuplicate spec.overrides[1].clusterName"}},
		{name: "neither name nor selector", yaml: `[{clusterOverrides: [{path: /spec/replicas, value: 2}]}]`,
			want: []string{"FieldValueRequired spec.overrides[0].clusterName"}},
		{name: "both name and selector", yaml: `[{clusterName: a, clusterSelector: {}}]`,
			want: []string{"FieldValueForbidden spec.overrides[0].clusterSelector"}},
		{name: "invalid selector", yaml: `[{clusterSelector: {matchExpressions: [{key: region, operator: In}]}}]`,
			want: []string{"FieldValueInvalid spec.overrides[0].clusterSelector.matchExpressions[0].values"}},
		{name: "path twice in one entry", yaml: `
- clusterName: a
  clusterOverrides: [{path: /spec/replicas, value: 2}, {op: add, path: /spec/replicas, value: 3}]`,
			want: []string{"FieldValueDuplicate spec.overrides[0].clusterOverrides[1].path"}},
		{name: "test then replace the same path is the RFC idiom", yaml: `
- clusterName: a
  clusterOverrides: [{op: test, path: /spec/replicas, value: 2}, {path: /spec/replicas, value: 3}]`},
		{name: "two appends", yaml: `
- clusterName: a
  clusterOverrides: [{op: add, path: /spec/args/-, value: x}, {op: add, path: /spec/args/-, value: y}]`},
		{name: "raw op on a label the typed overrider sets", yaml: `
- clusterName: a
  labels: {set: {example.com/tier: gold}}
  clusterOverrides: [{op: add, path: /metadata/labels/example.com~1tier, value: silver}]`,
			want: []string{"FieldValueDuplicate spec.overrides[0].clusterOverrides[0].path"}},
		{name: "raw op on the replicas the typed overrider sets", yaml: `
- {clusterName: a, replicas: 2, clusterOverrides: [{path: /spec/replicas, value: 3}]}`,
			want: []string{"FieldValueDuplicate spec.overrides[0].clusterOverrides[0].path"}},
		{name: "identity path", yaml: `[{clusterName: a, clusterOverrides: [{path: /metadata/name, value: x}]}]`,
			want: []string{"FieldValueForbidden spec.overrides[0].clusterOverrides[0].path"}},
		{name: "empty reference token", yaml: `[{clusterName: a, clusterOverrides: [{path: /spec//x, value: 1}]}]`,
			want: []string{"FieldValueInvalid spec.overrides[0].clusterOverrides[0].path"}},
		{name: "unknown op and missing value", yaml: `[{clusterName: a, clusterOverrides: [{op: move, path: /spec/x}]}]`,
			want: []string{"FieldValueNotSupported spec.overrides[0].clusterOverrides[0].op", "FieldValueRequired spec.overrides[0].clusterOverrides[0].value"}},
		{name: "negative replicas", yaml: `[{clusterName: a, replicas: -1}]`,
			want: []string{"FieldValueInvalid spec.overrides[0].replicas"}},
		{name: "valid images", yaml: `
- clusterName: a
  images:
  - {registry: "mirror.example.com:5000"}
  - {containerName: app, repository: team/app, tag: v1.2.3_rc-1}
  - {containerName: side, digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
  - {containerName: ipv6, registry: "[fd00::1]:5000"}`},
		{name: "image override that changes nothing", yaml: `[{clusterName: a, images: [{containerName: app}]}]`,
			want: []string{"FieldValueRequired spec.overrides[0].images[0]"}},
		{name: "bad image parts", yaml: `
- clusterName: a
  images: [{registry: "bad host", repository: Upper/Case, tag: -x, digest: "sha256:abc"}]`,
			want: []string{
				"FieldValueInvalid spec.overrides[0].images[0].registry", "FieldValueInvalid spec.overrides[0].images[0].repository",
				"FieldValueInvalid spec.overrides[0].images[0].tag", "FieldValueInvalid spec.overrides[0].images[0].digest",
			}},
		{name: "two image overrides for every container", yaml: `[{clusterName: a, images: [{tag: a}, {registry: r.io}]}]`,
			want: []string{"FieldValueDuplicate spec.overrides[0].images[1].containerName"}},
		{name: "containers", yaml: `
- clusterName: a
  containers:
  - {name: app, env: [{name: A, value: "1"}, {name: A, value: "2"}], removeEnv: [A, ""]}
  - {name: app}
  - {args: [x]}`,
			want: []string{
				"FieldValueDuplicate spec.overrides[0].containers[0].env[1].name",
				"FieldValueInvalid spec.overrides[0].containers[0].removeEnv[0]",
				"FieldValueRequired spec.overrides[0].containers[0].removeEnv[1]",
				"FieldValueDuplicate spec.overrides[0].containers[1].name",
				"FieldValueRequired spec.overrides[0].containers[2].name",
			}},
		{name: "labels and annotations", yaml: `
- clusterName: a
  labels: {set: {ok: "not a label value!"}, remove: [ok, "bad key!"]}
  annotations: {set: {note: "any text is fine here!"}}`,
			want: []string{
				"FieldValueInvalid spec.overrides[0].labels.set[ok]",
				"FieldValueInvalid spec.overrides[0].labels.remove[0]",
				"FieldValueInvalid spec.overrides[0].labels.remove[1]",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var overrides []federation.ClusterOverride
			require.NoError(t, yaml.UnmarshalStrict([]byte(tc.yaml), &overrides))
			errs := federation.ValidateOverrides(overrides, field.NewPath("spec", "overrides"))
			var got []string
			for _, e := range errs {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateOverrides() errors mismatch (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

// TestTypedOverridersRoundTrip checks that the typed overriders survive YAML, deep copy and
// the unstructured conversion the loops use.
func TestTypedOverridersRoundTrip(t *testing.T) {
	src := `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: prod}
spec:
  overrides:
  - clusterSelector: {matchLabels: {region: eu}}
    images: [{registry: mirror.eu.example.com}]
    labels: {set: {example.com/region: eu}, remove: [debug]}
  - clusterName: eu-1
    replicas: 4
    containers: [{name: app, command: [/bin/app], args: [--eu], env: [{name: A, value: b}], removeEnv: [C]}]
    annotations: {set: {a: b}}
    clusterOverrides: [{path: /spec/paused, value: true}]
`
	var obj federation.FederatedObject
	require.NoError(t, yaml.UnmarshalStrict([]byte(src), &obj))
	require.Empty(t, federation.ValidateFederatedObject(&obj))
	u, err := federation.ToUnstructured(obj.DeepCopy())
	require.NoError(t, err)
	back, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	if diff := cmp.Diff(obj.Spec.Overrides, back.Spec.Overrides); diff != "" {
		t.Errorf("overrides changed through deep copy and unstructured (-want +got):\n%s", diff)
	}
	require.Equal(t, int64(4), *back.Spec.Overrides[1].Replicas)
}
