package fake_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/fake"
)

// TestApplyIsStrict: Apply refuses, as `kubectl apply` with its default strict field
// validation does, a field the kind does not have (a built-in kind, or one of fedkit's) and
// a key twice in one mapping (a missing "---" that would merge two documents), naming the
// document, the line and the field. Nothing of the stream is written.
func TestApplyIsStrict(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{{
		name: "built-in kind",
		in: `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: shop}
dat: {k: v}
`,
		want: `fake: apply: document 2 (ConfigMap shop/web), line 8: unknown field "dat" (a ConfigMap has no such field)`,
	}, {
		name: "federated kind",
		in: `apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template: {spec: {replicas: 3, free: form}}
  palcement: {clusters: [{name: eu}]}
`,
		want: `fake: apply: document 1 (FederatedDeployment default/web), line 6: unknown field "spec.palcement" (a FederatedDeployment has no such field)`,
	}, {
		name: "missing separator",
		in: `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: default}
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: default}
`,
		want: `fake: apply: document 1 (ConfigMap default/b), line 4: duplicate key "apiVersion" (first at line 1): is a "---" line missing between two documents?`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			host := fake.NewHost("host")
			err := host.Apply(tc.in)
			if err == nil {
				t.Fatal("Apply accepted it")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
