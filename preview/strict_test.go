package preview_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
