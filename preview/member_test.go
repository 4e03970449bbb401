package preview_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/preview"
)

// TestUnknownTemplateFieldsAreWarnings: a template field the member's type does not have,
// in any built-in kind (an Ingress's removed serviceName, a typo in a ConfigMap or a
// Deployment's container), is what plan.Decide finds the member's API server would drop: a
// warning per placed cluster with the federated object's field path, which --strict
// (Check(true)) fails on.
func TestUnknownTemplateFieldsAreWarnings(t *testing.T) {
	rep := runChecks(t, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedIngress
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {serviceName: web, servicePort: 80}}]}}]
  placement: {clusters: [{name: eu}]}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: settings, namespace: shop}
spec:
  template: {dataa: {k: v}}
  placement: {clusters: [{name: us}]}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: api, namespace: shop}
spec:
  template:
    spec:
      selector: {matchLabels: {app: api}}
      template: {metadata: {labels: {app: api}}, spec: {containers: [{name: api, image: api, imagePullPolicyy: Always}]}}
  placement: {clusters: [{name: eu}, {name: us}]}
`)
	var got []string
	for _, o := range rep.Objects {
		got = append(got, problems(o.Problems)...)
	}
	want := []string{
		`Warning: FederatedIngress shop/web: spec.template.spec.rules[0].http.paths[0].backend.serviceName: cluster "eu": the member's API server drops it: networking.k8s.io/v1 Ingress has no such field`,
		`Warning: FederatedIngress shop/web: spec.template.spec.rules[0].http.paths[0].backend.servicePort: cluster "eu": the member's API server drops it: networking.k8s.io/v1 Ingress has no such field`,
		`Warning: FederatedConfigMap shop/settings: spec.template.dataa: cluster "us": the member's API server drops it: v1 ConfigMap has no such field`,
		`Warning: FederatedDeployment shop/api: spec.template.spec.template.spec.containers[0].imagePullPolicyy: cluster "eu": the member's API server drops it: apps/v1 Deployment has no such field`,
		`Warning: FederatedDeployment shop/api: spec.template.spec.template.spec.containers[0].imagePullPolicyy: cluster "us": the member's API server drops it: apps/v1 Deployment has no such field`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if err := rep.Check(false); err != nil {
		t.Errorf("Check(false) with warnings only: %v", err)
	}
	if err := rep.Check(true); !errors.Is(err, preview.ErrProblems) {
		t.Errorf("Check(true) = %v; want ErrProblems", err)
	}
}

// TestMemberReplicasAfterOverrides: each cluster's row says how many replicas the member gets
// once the overrides are applied, beside what the scheduler gave it.
func TestMemberReplicasAfterOverrides(t *testing.T) {
	rep := runChecks(t, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: api, namespace: shop}
spec:
  template:
    spec:
      replicas: 3
      selector: {matchLabels: {app: api}}
      template: {metadata: {labels: {app: api}}, spec: {containers: [{name: api, image: api}]}}
  placement: {clusters: [{name: eu}, {name: us}]}
  overrides:
  - clusterName: us
    clusterOverrides: [{path: /spec/replicas, value: 5}]
`)
	got := map[string]string{}
	for _, c := range rep.Objects[0].Clusters {
		got[c.Name] = c.ReplicasText()
	}
	if diff := cmp.Diff(map[string]string{"eu": "3", "us": "5 (scheduled 3)"}, got); diff != "" {
		t.Errorf("replicas (-want +got):\n%s", diff)
	}
	for _, c := range rep.Objects[0].Clusters {
		if c.Name == "us" && (c.MemberReplicas == nil || *c.MemberReplicas != 5) {
			t.Errorf("us: MemberReplicas = %v; want 5", c.MemberReplicas)
		}
	}
}
