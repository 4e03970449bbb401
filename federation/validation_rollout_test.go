package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
)

func TestValidateRollout(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{name: "names, selector and percentages", spec: `
  rollout:
    autoRollback: true
    stages:
    - {name: canary, clusters: [a], minReadySeconds: 60}
    - {clusterSelector: {matchLabels: {region: eu}}, progressDeadlineSeconds: 900}
    - {percentage: 50}
    - {percentage: 100}`},
		{name: "no rollout", spec: `
  template: {spec: {replicas: 1}}`},
		{name: "a stage that chooses nothing", spec: `
  rollout: {stages: [{name: x}]}`, want: []string{"FieldValueRequired spec.rollout.stages[0]"}},
		{name: "a stage that chooses twice", spec: `
  rollout: {stages: [{clusters: [a], percentage: 10}]}`, want: []string{"FieldValueForbidden spec.rollout.stages[0]"}},
		{name: "a cluster in two stages", spec: `
  rollout: {stages: [{clusters: [a, b]}, {clusters: [c, a, ""]}]}`,
			want: []string{"FieldValueDuplicate spec.rollout.stages[1].clusters[1]", "FieldValueRequired spec.rollout.stages[1].clusters[2]"}},
		{name: "percentages out of range or shrinking", spec: `
  rollout: {stages: [{percentage: 0}, {percentage: 50}, {percentage: 50}, {percentage: 20}, {percentage: 101}]}`,
			want: []string{
				"FieldValueInvalid spec.rollout.stages[0].percentage",
				"FieldValueInvalid spec.rollout.stages[2].percentage",
				"FieldValueInvalid spec.rollout.stages[3].percentage",
				"FieldValueInvalid spec.rollout.stages[4].percentage",
			}},
		{name: "stage names twice, bad times, bad selector", spec: `
  rollout:
    stages:
    - {name: x, clusters: [a], minReadySeconds: -1, progressDeadlineSeconds: 0}
    - {name: x, clusterSelector: {matchLabels: {"bad key!": y}}}`,
			want: []string{
				"FieldValueInvalid spec.rollout.stages[0].minReadySeconds",
				"FieldValueInvalid spec.rollout.stages[0].progressDeadlineSeconds",
				"FieldValueDuplicate spec.rollout.stages[1].name",
				"FieldValueInvalid spec.rollout.stages[1].clusterSelector.matchLabels[bad key!]",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := errorPaths(federation.ValidateFederatedObject(decodeFederated(t, tc.spec)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateFederatedObject() paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultRollout(t *testing.T) {
	obj := decodeFederated(t, `
  rollout: {stages: [{clusters: [a]}, {name: rest, percentage: 100, progressDeadlineSeconds: 60}]}`)
	federation.DefaultFederatedObject(obj)
	federation.DefaultFederatedObject(obj) // idempotent
	want := &federation.Rollout{Stages: []federation.RolloutStage{
		{Name: "stage-1", Clusters: []string{"a"}, ProgressDeadlineSeconds: ptr(federation.DefaultProgressDeadlineSeconds)},
		{Name: "rest", Percentage: ptr(int32(100)), ProgressDeadlineSeconds: ptr(int32(60))},
	}}
	if diff := cmp.Diff(want, obj.Spec.Rollout); diff != "" {
		t.Errorf("DefaultFederatedObject rollout (-want +got):\n%s", diff)
	}
}
