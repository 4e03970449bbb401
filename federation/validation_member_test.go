package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// TestValidateMember: the rules a member's API server refuses a workload for on every
// create, with its field paths; other kinds are the server's own business.
func TestValidateMember(t *testing.T) {
	for _, tc := range []struct {
		name, obj string
		want      []string
	}{
		{name: "valid deployment", obj: `{apiVersion: apps/v1, kind: Deployment, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a, tier: web}}, spec: {containers: [{name: a, image: a}]}}}}`},
		{name: "no selector", obj: `{apiVersion: apps/v1, kind: StatefulSet, spec: {template: {spec: {containers: [{name: a, image: a}]}}}}`,
			want: []string{"spec.selector: Required value"}},
		{name: "empty selector", obj: `{apiVersion: apps/v1, kind: DaemonSet, spec: {selector: {}, template: {spec: {containers: [{name: a, image: a}]}}}}`,
			want: []string{"spec.selector: Invalid value: {}: empty selector is invalid for daemonset"}},
		{name: "labels do not match", obj: `{apiVersion: apps/v1, kind: ReplicaSet, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: b}}, spec: {containers: [{name: a, image: a}]}}}}`,
			want: []string{"spec.template.metadata.labels: Invalid value: {\"app\":\"b\"}: `selector` does not match template `labels`"}},
		{name: "no containers", obj: `{apiVersion: apps/v1, kind: Deployment, spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}}}}`,
			want: []string{"spec.template.spec.containers: Required value"}},
		{name: "job", obj: `{apiVersion: batch/v1, kind: Job, spec: {template: {spec: {restartPolicy: Always, containers: [{image: a}]}}}}`,
			want: []string{"spec.template.spec.containers[0].name: Required value", `spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"`}},
		{name: "job without selector is fine", obj: `{apiVersion: batch/v1, kind: Job, spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: a}]}}}}`},
		{name: "other kinds", obj: `{apiVersion: v1, kind: Service, spec: {}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.obj), &u.Object); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range federation.ValidateMember(u) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
