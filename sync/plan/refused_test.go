package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestNoCreateWhereThePlacementRefusesNow: the schedule was written before the user drained
// us (a NoExecute taint the Secret's placement does not tolerate), and the scheduler has not
// looked again yet (its pass failed). Sync follows the schedule where a copy is (graceful
// eviction is the scheduler's), but creates nothing in a cluster the placement refuses now:
// credentials never reach a cluster their own placement excludes, however old the schedule.
// (The soak, seed 3, 5x40: a Secret sent to a cluster drained the step before.)
func TestNoCreateWhereThePlacementRefusesNow(t *testing.T) {
	var obj federation.FederatedObject
	if err := yaml.Unmarshal([]byte(`
metadata: {name: creds, namespace: shop, generation: 1}
spec:
  template: {data: {password: c2VjcmV0}}
  placement: {clusterSelector: {}}
status:
  conditions: [{type: Scheduled, status: "True", reason: Scheduled, observedGeneration: 1, lastTransitionTime: "2026-12-01T00:00:00Z", message: ""}]
  schedule: {clusters: [{name: eu}, {name: us}, {name: ap}]}
`), &obj); err != nil {
		t.Fatal(err)
	}
	federation.DefaultFederatedObject(&obj)
	fleet := fake.NewFleet()
	for _, name := range []string{"ap", "eu", "us"} {
		fleet.Add(name, nil)
	}
	clusters := fleet.Clusters()
	for i := range clusters {
		if clusters[i].Name != "ap" {
			clusters[i].Spec.Taints = []corev1.Taint{{Key: "drain", Value: "true", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{}}}
		}
	}
	managed := map[string]any{federation.ManagedByLabel: federation.ManagedByValue}
	d, err := plan.Decide(plan.Input{
		Type:     federation.SecretType,
		Object:   &obj,
		Clusters: clusters,
		Members: map[string]plan.MemberState{
			"ap": {},
			"eu": {},
			"us": {Object: secret(managed)},
		},
		Revision:         1,
		WaitForScheduler: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range d.Changes {
		got[c.Cluster] = string(c.Action) + " " + c.Reason
	}
	want := map[string]string{
		"ap": string(plan.ActionCreate) + " ",
		"eu": string(plan.ActionNone) + " " + plan.ReasonPlacementRefused,
		"us": string(plan.ActionUpdate) + " ", // the copy there stays the scheduler's to evict
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

// secret is a member Secret shop/creds with labels.
func secret(labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "shop", "labels": labels}}}
}
