package override_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// validationFleet is three clusters, two of them in Europe.
func validationFleet() []federation.Cluster {
	mk := func(name, region string) federation.Cluster {
		return federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"region": region}}}
	}
	return []federation.Cluster{mk("us-1", "us"), mk("eu-1", "eu"), mk("eu-2", "eu")}
}

// webWith is a FederatedDeployment web in shop whose spec.overrides is the given YAML list.
func webWith(t *testing.T, template, overrides string) *federation.FederatedObject {
	t.Helper()
	var obj federation.FederatedObject
	require.NoError(t, yaml.Unmarshal([]byte(`
metadata: {name: web, namespace: shop}
spec:
  template: `+template+`
  placement: {clusterSelector: {}}
  overrides: `+overrides+"\n"), &obj))
	return &obj
}

const webTemplate = `{spec: {replicas: 3, template: {spec: {containers: [{name: app, image: "nginx:1.27"}]}}}}`

func TestValidate(t *testing.T) {
	cases := []struct {
		name      string
		template  string
		overrides string
		typ       federation.TypeConfig
		want      []string
	}{
		{
			name:      "valid",
			overrides: `[{clusterName: eu-1, clusterOverrides: [{path: /spec/replicas, value: 4}]}, {clusterSelector: {matchLabels: {region: eu}}, images: [{tag: "1.28"}]}]`,
		},
		{
			name:      "a path the template does not have",
			overrides: `[{clusterName: us-1, clusterOverrides: [{path: /spec/replicas, value: 4}, {op: remove, path: /spec/paused}]}]`,
			want: []string{`spec.overrides[0].clusterOverrides[1].path: Invalid value: "/spec/paused": cluster "us-1": ` +
				`remove /spec/paused: override: path not found: no member "paused" to remove`},
		},
		{
			name:      "one error for every cluster a selector entry fails",
			overrides: `[{clusterSelector: {matchLabels: {region: eu}}, clusterOverrides: [{path: /spec/strategy/type, value: Recreate}]}]`,
			want: []string{`spec.overrides[0].clusterOverrides[0].path: Invalid value: "/spec/strategy/type": clusters "eu-1", "eu-2": ` +
				`replace /spec/strategy/type: override: path not found: /spec/strategy does not exist`},
		},
		{
			name:      "an override for a cluster that is not in the fleet yet is rendered too",
			overrides: `[{clusterName: ap-1, clusterOverrides: [{op: remove, path: /spec/paused}]}]`,
			want: []string{`spec.overrides[0].clusterOverrides[0].path: Invalid value: "/spec/paused": cluster "ap-1": ` +
				`remove /spec/paused: override: path not found: no member "paused" to remove`},
		},
		{
			name: "an entry that fails only after the one before it",
			overrides: `[{clusterName: eu-1, clusterOverrides: [{op: remove, path: /spec/replicas/x}]},` +
				`{clusterSelector: {matchLabels: {region: eu}}, clusterOverrides: [{op: add, path: /spec/paused, value: true}]}]`,
			want: []string{`spec.overrides[0].clusterOverrides[0].path: Invalid value: "/spec/replicas/x": cluster "eu-1": ` +
				`remove /spec/replicas/x: override: path not found: /spec/replicas is the number 3, not an object or array`},
		},
		{
			name: "every failing override of a cluster, not only the first",
			overrides: `[{clusterName: us-1, clusterOverrides: [{op: remove, path: /spec/paused}, {path: /spec/replicas, value: 4}, {op: remove, path: /spec/minReadySeconds}]},` +
				`{clusterSelector: {matchLabels: {region: us}}, containers: [{name: sidecar, args: ["-v"]}]}]`,
			want: []string{
				`spec.overrides[0].clusterOverrides[0].path: Invalid value: "/spec/paused": cluster "us-1": ` +
					`remove /spec/paused: override: path not found: no member "paused" to remove`,
				`spec.overrides[0].clusterOverrides[2].path: Invalid value: "/spec/minReadySeconds": cluster "us-1": ` +
					`remove /spec/minReadySeconds: override: path not found: no member "minReadySeconds" to remove`,
				`spec.overrides[1].containers: Invalid value: cluster "us-1": ` +
					`containers /spec/template/spec/containers: override: container not found: no container named "sidecar"`,
			},
		},
		{
			name:      "a typed overrider naming a container the template lacks",
			overrides: `[{clusterName: us-1, containers: [{name: sidecar, args: ["-v"]}]}]`,
			want: []string{`spec.overrides[0].containers: Invalid value: cluster "us-1": ` +
				`containers /spec/template/spec/containers: override: container not found: no container named "sidecar"`},
		},
		{
			name:      "replicas overrider on a type without replicas",
			template:  `{data: {k: v}}`,
			overrides: `[{clusterName: us-1, replicas: 2}]`,
			typ:       federation.ConfigMapType,
			want: []string{`spec.overrides[0]: Invalid value: cluster "us-1": ` +
				`override: invalid override: overrides[0].replicas: ConfigMap has no replica count (its TypeConfig has no ReplicasPath)`},
		},
		{
			name:      "the scheduled replicas are there for overrides of a template without replicas",
			template:  `{spec: {template: {spec: {containers: [{name: app, image: "nginx:1.27"}]}}}}`,
			overrides: `[{clusterName: us-1, clusterOverrides: [{path: /spec/replicas, value: 4}]}]`,
		},
		{
			name:      "validation errors come alone",
			overrides: `[{clusterName: us-1, clusterOverrides: [{path: /metadata/name, value: x}, {op: remove, path: /spec/paused}]}]`,
			want:      []string{`spec.overrides[0].clusterOverrides[0].path: Forbidden: /metadata/name identifies the object and cannot be overridden`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.template == "" {
				tc.template = webTemplate
			}
			if tc.typ.Federated.Kind == "" {
				tc.typ = federation.DeploymentType
			}
			errs := override.Validate(webWith(t, tc.template, tc.overrides), tc.typ, validationFleet()).Errors()
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateAgreesWithRender: for every cluster, Validate reports an error for it exactly
// when Render (what sync calls) fails for it.
func TestValidateAgreesWithRender(t *testing.T) {
	obj := webWith(t, webTemplate, `[{clusterSelector: {matchLabels: {region: eu}}, clusterOverrides: [{op: remove, path: /spec/paused}]},`+
		`{clusterName: us-1, images: [{tag: "1.28"}]}]`)
	fleet := validationFleet()
	var failing []string
	for _, c := range fleet {
		in := override.InputFor(obj, federation.DeploymentType)
		in.ClusterName, in.ClusterLabels = c.Name, c.Labels
		n := int64(3)
		in.Replicas = &n
		if _, err := override.Render(in); err != nil {
			failing = append(failing, c.Name)
		}
	}
	if diff := cmp.Diff([]string{"eu-1", "eu-2"}, failing); diff != "" {
		t.Errorf("Render fails for (-want +got):\n%s", diff)
	}
	v := override.Validate(obj, federation.DeploymentType, fleet)
	require.Empty(t, v.Invalid)
	require.Len(t, v.Failures, 1)
	f := v.Failures[0]
	if diff := cmp.Diff(failing, f.Clusters); diff != "" {
		t.Errorf("Validate fails for (-want +got):\n%s", diff)
	}
	require.Equal(t, "spec.overrides[0].clusterOverrides[0].path", f.Field.String())
	require.Equal(t, `remove /spec/paused: override: path not found: no member "paused" to remove`, f.Detail, "the detail names no cluster")
	errs := v.Errors()
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Detail, `clusters "eu-1", "eu-2": `+f.Detail)
}

// BenchmarkValidate is the cost of the admission-time check for an object with a selector
// override and a named one, over a fleet of 100 clusters (half of them selected): one render
// per cluster.
func BenchmarkValidate(b *testing.B) {
	var obj federation.FederatedObject
	require.NoError(b, yaml.Unmarshal([]byte(`
metadata: {name: web, namespace: shop}
spec:
  template: `+webTemplate+`
  placement: {clusterSelector: {}}
  overrides:
  - {clusterSelector: {matchLabels: {region: eu}}, images: [{tag: "1.28"}], clusterOverrides: [{path: /spec/replicas, value: 4}]}
  - {clusterName: c-7, clusterOverrides: [{op: add, path: /spec/paused, value: true}]}
`), &obj))
	clusters := make([]federation.Cluster, 100)
	for i := range clusters {
		region := "us"
		if i%2 == 0 {
			region = "eu"
		}
		clusters[i] = federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c-" + strconv.Itoa(i), Labels: map[string]string{"region": region}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if errs := override.Validate(&obj, federation.DeploymentType, clusters).Errors(); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
