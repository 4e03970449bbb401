package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestRolledBack: an automated rollback writes the stable revision's template, overrides and
// retainReplicas back, never its placement nor the replica count; an object a propagation
// policy generated is marked federation.RolledBackAnnotation for its generator, any other is
// not. The object given is not changed.
func TestRolledBack(t *testing.T) {
	stable := plan.Revision{Number: 3, Spec: federation.FederatedSpec{
		Template:  federation.RawObject{Object: map[string]any{"spec": map[string]any{"replicas": int64(2), "image": "web:1"}}},
		Placement: federation.Placement{Clusters: []federation.ClusterReference{{Name: "old"}}},
	}}
	for _, tc := range []struct {
		name     string
		labels   map[string]any
		wantMark string
	}{
		{name: "a user's object", labels: nil},
		{name: "a policy's object", labels: map[string]any{federation.GeneratedByLabel: federation.GeneratedByPropagation}, wantMark: "3"},
		{name: "the dependencies loop's object", labels: map[string]any{federation.GeneratedByLabel: "dependencies"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := map[string]any{"name": "web", "namespace": "shop"}
			if tc.labels != nil {
				meta["labels"] = tc.labels
			}
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": meta, "spec": map[string]any{
				"template":  map[string]any{"spec": map[string]any{"replicas": int64(5), "image": "web:2"}},
				"placement": map[string]any{"clusters": []any{map[string]any{"name": "new"}}},
			}}}
			before := u.DeepCopy()
			got, err := plan.RolledBack(u, stable, federation.DeploymentType.ReplicasFields())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, u); diff != "" {
				t.Errorf("RolledBack changed its input (-before +after):\n%s", diff)
			}
			wantSpec := map[string]any{
				"template":  map[string]any{"spec": map[string]any{"replicas": int64(5), "image": "web:1"}},
				"placement": map[string]any{"clusters": []any{map[string]any{"name": "new"}}},
			}
			if diff := cmp.Diff(wantSpec, got.Object["spec"]); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if mark := got.GetAnnotations()[federation.RolledBackAnnotation]; mark != tc.wantMark {
				t.Errorf("%s = %q; want %q", federation.RolledBackAnnotation, mark, tc.wantMark)
			}
		})
	}
}
