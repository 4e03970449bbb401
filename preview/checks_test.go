package preview_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/preview"
)

// checkFleet is two ready Clusters.
const checkFleet = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: eu, labels: {region: europe}}
spec: {apiEndpoint: "https://eu"}
status: {conditions: [{type: Ready, status: "True", reason: Healthy, message: ok, lastTransitionTime: "2026-11-30T12:00:00Z"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: us, labels: {region: america}}
spec: {apiEndpoint: "https://us"}
status: {conditions: [{type: Ready, status: "True", reason: Healthy, message: ok, lastTransitionTime: "2026-11-30T12:00:00Z"}]}
---
`

func runChecks(t *testing.T, objects string) preview.Report {
	t.Helper()
	in, err := preview.Decode([]byte(checkFleet + objects))
	if err != nil {
		t.Fatal(err)
	}
	in.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rep, err := preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestTemplateTheMemberWouldRefuse: a Deployment template without selector and pod labels,
// or a Job without restartPolicy, is what the member's API server refuses on every create;
// the preview says so, per placed cluster, with the member kind's field path.
func TestTemplateTheMemberWouldRefuse(t *testing.T) {
	rep := runChecks(t, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template: {spec: {replicas: 2, template: {spec: {containers: [{name: web}]}}}}
  placement: {clusters: [{name: eu}]}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: api, namespace: shop}
spec:
  template:
    spec:
      selector: {matchLabels: {app: api}}
      template: {metadata: {labels: {app: other}}, spec: {containers: [{name: api, image: api}]}}
  placement: {clusters: [{name: eu}]}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedJob
metadata: {name: migrate, namespace: shop}
spec:
  template: {spec: {template: {spec: {containers: [{name: m, image: m}]}}}}
  placement: {clusters: [{name: us}]}
`)
	var got []string
	for _, o := range rep.Objects {
		got = append(got, problems(o.Problems)...)
	}
	want := []string{
		`Error: FederatedDeployment shop/web: spec.template.spec.selector: cluster "eu": the member's API server refuses the Deployment: spec.selector: Required value`,
		`Error: FederatedDeployment shop/web: spec.template.spec.template.spec.containers[0].image: cluster "eu": the member's API server refuses the Deployment: spec.template.spec.containers[0].image: Required value`,
		`Error: FederatedDeployment shop/api: spec.template.spec.template.metadata.labels: cluster "eu": the member's API server refuses the Deployment: spec.template.metadata.labels: Invalid value: {"app":"other"}: ` + "`selector` does not match template `labels`",
		`Error: FederatedJob shop/migrate: spec.template.spec.template.spec.restartPolicy: cluster "us": the member's API server refuses the Job: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestPlacedNowhereIsAWarning: an object whose placement selects no Cluster is written
// nowhere; the preview warns, and Check fails on warnings when asked to be strict.
func TestPlacedNowhereIsAWarning(t *testing.T) {
	rep := runChecks(t, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: settings, namespace: shop}
spec:
  template: {data: {k: v}}
  placement: {clusterSelector: {matchLabels: {region: asia}}}
`)
	if diff := cmp.Diff([]string{
		`Warning: FederatedConfigMap shop/settings: spec.placement: it is placed in no cluster: the placement selects none of the 2 Clusters (see each cluster's reason)`,
	}, problems(rep.Objects[0].Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if err := rep.Check(false); err != nil {
		t.Errorf("Check(false) with warnings only: %v", err)
	}
	err := rep.Check(true)
	if !errors.Is(err, preview.ErrProblems) {
		t.Fatalf("Check(true): want ErrProblems, got %v", err)
	}
	if want := "preview: problems found: 1 warning (strict)\nWarning: FederatedConfigMap shop/settings: spec.placement: it is placed in no cluster: the placement selects none of the 2 Clusters (see each cluster's reason)"; err.Error() != want {
		t.Errorf("Check(true) = %q, want %q", err, want)
	}
}
