package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestPlanKeepsClaims: a member PersistentVolumeClaim whose cluster leaves the placement is
// released, never deleted (its data is not collateral of a move), unless the
// FederatedPersistentVolumeClaim asks for it (federation.ClaimRemovalAnnotation: Delete) or is
// itself being deleted. Other kinds are deleted as ever, but in a cluster
// federation.ReleaseClustersAnnotation lists (a dependency orphaned pods there use): released
// there too, unless the object itself is being deleted.
func TestPlanKeepsClaims(t *testing.T) {
	fleet := fake.NewFleet()
	for _, name := range []string{"eu", "us"} {
		fleet.Add(name, nil)
	}
	member := func(kind string) *unstructured.Unstructured {
		apiVersion := "v1"
		if kind == "Deployment" {
			apiVersion = "apps/v1"
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "data", "namespace": "shop", "uid": "m-1",
				"labels": map[string]any{federation.ManagedByLabel: federation.ManagedByValue}}}}
	}
	for _, tc := range []struct {
		name        string
		typ         federation.TypeConfig
		annotations map[string]string
		deleting    bool
		want        plan.Action
		released    bool // the orphaned copy is marked federation.ReleasedAnnotation
	}{
		{name: "a claim whose workload moved away is released", typ: federation.PersistentVolumeClaimType, want: plan.ActionOrphan, released: true},
		{name: "unless the federated claim asks for its removal", typ: federation.PersistentVolumeClaimType,
			annotations: map[string]string{federation.ClaimRemovalAnnotation: federation.ClaimRemovalDelete}, want: plan.ActionDelete},
		{name: "Retain says the default", typ: federation.PersistentVolumeClaimType,
			annotations: map[string]string{federation.ClaimRemovalAnnotation: federation.ClaimRemovalRetain}, want: plan.ActionOrphan, released: true},
		{name: "deleting the federated claim deletes it", typ: federation.PersistentVolumeClaimType, deleting: true, want: plan.ActionDelete},
		{name: "another kind is deleted", typ: federation.DeploymentType, want: plan.ActionDelete},
		{name: "a ConfigMap whose cluster is listed for release is released", typ: federation.ConfigMapType,
			annotations: map[string]string{federation.ReleaseClustersAnnotation: "eu"}, want: plan.ActionOrphan, released: true},
		{name: "a ConfigMap listed for release elsewhere is deleted", typ: federation.ConfigMapType,
			annotations: map[string]string{federation.ReleaseClustersAnnotation: "ap,us"}, want: plan.ActionDelete},
		{name: "deleting a ConfigMap listed for release deletes it", typ: federation.ConfigMapType,
			annotations: map[string]string{federation.ReleaseClustersAnnotation: "eu"}, deleting: true, want: plan.ActionDelete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj federation.FederatedObject
			if err := yaml.Unmarshal([]byte(`
metadata: {name: data, namespace: shop, generation: 1, uid: fed-1}
spec:
  template: {spec: {accessModes: [ReadWriteOnce]}}
  placement: {clusters: [{name: us}]}
`), &obj); err != nil {
				t.Fatal(err)
			}
			federation.DefaultFederatedObject(&obj)
			obj.Annotations = tc.annotations
			if tc.deleting {
				obj.DeletionTimestamp = &metav1.Time{}
			}
			d, err := plan.Decide(plan.Input{
				Type: tc.typ, Object: &obj, Clusters: fleet.Clusters(), Revision: 1,
				Members: map[string]plan.MemberState{"eu": {Object: member(tc.typ.Target.Kind)}, "us": {}},
			})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]plan.Action{}
			var eu plan.Change
			for _, c := range d.Changes {
				got[c.Cluster] = c.Action
				if c.Cluster == "eu" {
					eu = c
				}
			}
			if diff := cmp.Diff(tc.want, got["eu"]); diff != "" {
				t.Errorf("eu (-want +got):\n%s", diff)
			}
			marked := eu.Desired != nil && eu.Desired.GetAnnotations()[federation.ReleasedAnnotation] == "fed-1"
			if marked != tc.released {
				t.Errorf("eu's copy released (marked %s): %v; want %v", federation.ReleasedAnnotation, marked, tc.released)
			}
		})
	}
}
