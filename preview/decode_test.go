package preview_test

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/preview"
)

// TestDecodeIsStrict: a typo in a field name, and a missing "---" that merges two documents,
// are errors naming the document, the line and the field, as kubectl's strict field
// validation does; the template stays free-form.
func TestDecodeIsStrict(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{{
		name: "unknown field",
		in: `apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template: {spec: {replicas: 3, anyField: ok}}
  palcement: {clusters: [{name: eu}]}
`,
		want: `preview: document 1 (FederatedDeployment shop/web), line 6: unknown field "spec.palcement" (a FederatedDeployment has no such field)`,
	}, {
		name: "missing separator",
		in: `apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: eu}
spec: {apiEndpoint: "https://eu"}
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: us}
spec: {apiEndpoint: "https://us"}
`,
		want: `preview: document 1 (Cluster us), line 5: duplicate key "apiVersion" (first at line 1): is a "---" line missing between two documents?`,
	}, {
		name: "list item",
		in: `apiVersion: v1
kind: List
items:
- apiVersion: core.federation.k8s.io/v1alpha1
  kind: ReplicaSchedulingPreference
  metadata: {name: web, namespace: shop}
  spec: {targetKind: FederatedDeployment, totalReplicas: 3, rebalnce: true}
`,
		want: `preview: document 1 items[0] (ReplicaSchedulingPreference shop/web), line 7: unknown field "spec.rebalnce" (a ReplicaSchedulingPreference has no such field)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := preview.Decode([]byte(tc.in))
			if err == nil {
				t.Fatal("Decode accepted it")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneFixtureFeedsApplyAndPreview: the manifests of a repository, with the Namespace that
// fake.Apply needs first and a plain ConfigMap, are applied to a fake host and previewed
// as they are.
func TestOneFixtureFeedsApplyAndPreview(t *testing.T) {
	data, err := os.ReadFile("testdata/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.NewHost("host").Apply(string(data)); err != nil {
		t.Fatalf("fake.Apply: %v", err)
	}
	in, err := preview.Decode(data)
	if err != nil {
		t.Fatalf("preview.Decode: %v", err)
	}
	var other []string
	for _, u := range in.Other {
		other = append(other, u.GetKind()+" "+u.GetName())
	}
	if diff := cmp.Diff([]string{"Namespace shop", "ConfigMap settings"}, other); diff != "" {
		t.Errorf("Input.Other (-want +got):\n%s", diff)
	}
	in.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rep, err := preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Objects) != 1 || len(rep.Objects[0].Problems) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("want one object without problems, got %+v", rep)
	}
	if c := rep.Objects[0].Clusters; len(c) != 1 || !c[0].Selected {
		t.Errorf("want web placed in eu, got %+v", c)
	}
}
