package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
