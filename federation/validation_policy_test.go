package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

func TestValidatePropagationPolicy(t *testing.T) {
	tests := []struct {
		name    string
		cluster bool
		spec    string
		want    []string
	}{
		{name: "valid", spec: `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]
  priority: 5
  placement: {clusters: [{name: a}]}
  scheduling: {totalReplicas: 3, clusters: {"*": {weight: 1}}}
  conflictResolution: Overwrite`},
		{name: "valid cluster policy with a namespace", cluster: true, spec: `
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: web, name: settings}]`},
		{name: "no selectors", spec: `
  priority: 1`, want: []string{"FieldValueRequired spec.resourceSelectors"}},
		{name: "bad selectors", spec: `
  resourceSelectors:
  - {apiVersion: "", kind: ""}
  - {apiVersion: apps/v1/x, kind: Deployment, name: "Bad_Name", namespace: other}
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {"bad key!": x}}}`,
			want: []string{
				"FieldValueRequired spec.resourceSelectors[0].apiVersion",
				"FieldValueRequired spec.resourceSelectors[0].kind",
				"FieldValueInvalid spec.resourceSelectors[1].apiVersion",
				"FieldValueInvalid spec.resourceSelectors[1].name",
				"FieldValueForbidden spec.resourceSelectors[1].namespace",
				"FieldValueInvalid spec.resourceSelectors[2].labelSelector.matchLabels[bad key!]",
			}},
		{name: "bad placement, scheduling and conflict resolution", spec: `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {maxClusters: -1}
  scheduling: {totalReplicas: -1, algorithm: DHondt, rebalancePeriod: 0s, clusters: {a: {weight: -1}}}
  conflictResolution: Merge`,
			want: []string{
				"FieldValueInvalid spec.placement.maxClusters",
				"FieldValueInvalid spec.scheduling.totalReplicas",
				"FieldValueInvalid spec.scheduling.rebalancePeriod",
				"FieldValueNotSupported spec.scheduling.algorithm",
				"FieldValueInvalid spec.scheduling.clusters[a].weight",
				"FieldValueNotSupported spec.conflictResolution",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if tc.cluster {
				p := &federation.ClusterPropagationPolicy{}
				require.NoError(t, yaml.UnmarshalStrict([]byte("spec:\n"+tc.spec), p))
				got = errorPaths(federation.ValidateClusterPropagationPolicy(p))
			} else {
				p := &federation.PropagationPolicy{}
				require.NoError(t, yaml.UnmarshalStrict([]byte("spec:\n"+tc.spec), p))
				got = errorPaths(federation.ValidatePropagationPolicy(p))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}
