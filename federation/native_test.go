package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// TestNativeTemplate: a native host object becomes a template with its content, labels and
// annotations, and nothing the host's servers, controllers or fedkit gave it.
func TestNativeTemplate(t *testing.T) {
	for _, tc := range nativeCases {
		t.Run(tc.name, func(t *testing.T) {
			var native, want map[string]any
			if err := yaml.Unmarshal([]byte(tc.native), &native); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			got := federation.NativeTemplate(&unstructured.Unstructured{Object: native})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("NativeTemplate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithTemplate: a native object with its own template is itself, and NativeTemplate of
// a native object with another template is that template: what the template leaves out
// stays the native object's.
func TestWithTemplate(t *testing.T) {
	for _, tc := range nativeCases {
		t.Run(tc.name, func(t *testing.T) {
			var native map[string]any
			if err := yaml.Unmarshal([]byte(tc.native), &native); err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: native}
			if diff := cmp.Diff(native, federation.WithTemplate(u, federation.NativeTemplate(u)).Object); diff != "" {
				t.Errorf("WithTemplate of its own template (-want +got):\n%s", diff)
			}
			other := federation.NativeTemplate(u)
			other["metadata"] = map[string]any{"labels": map[string]any{"rolled": "back"}}
			other["extra"] = "field"
			got := federation.WithTemplate(u, other)
			if diff := cmp.Diff(other, federation.NativeTemplate(got)); diff != "" {
				t.Errorf("NativeTemplate(WithTemplate(native, other)) (-other +got):\n%s", diff)
			}
			if got.GetUID() != u.GetUID() || got.GetResourceVersion() != u.GetResourceVersion() {
				t.Errorf("server metadata changed: uid %q, resourceVersion %q", got.GetUID(), got.GetResourceVersion())
			}
		})
	}
}

var nativeCases = []struct{ name, native, want string }{
	{"deployment", `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: u1
  resourceVersion: "7"
  generation: 3
  creationTimestamp: "2026-12-01T00:00:00Z"
  managedFields: [{manager: kubectl}]
  finalizers: [x]
  ownerReferences: [{apiVersion: v1, kind: X, name: x, uid: u0}]
  labels: {app: web}
  annotations: {note: keep, kubectl.kubernetes.io/last-applied-configuration: "{}", federation.k8s.io/policy: cluster/p, deployment.kubernetes.io/revision: "2", federation.k8s.io/orphan: "true"}
spec: {replicas: 2}
status: {readyReplicas: 2}`, `
metadata: {labels: {app: web}, annotations: {note: keep}}
spec: {replicas: 2}`},
	{"service: no cluster IPs", `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1], ports: [{port: 80}]}`, `
spec: {ports: [{port: 80}]}`},
	{"job: no generated selector", `
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: shop}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u1}}
  template:
    metadata: {labels: {app: once, batch.kubernetes.io/controller-uid: u1, batch.kubernetes.io/job-name: once, controller-uid: u1, job-name: once}}`, `
spec:
  template:
    metadata: {labels: {app: once}}`},
	{"a ServiceAccount without its token secrets", `{apiVersion: v1, kind: ServiceAccount, metadata: {name: sa, namespace: ns, uid: x, resourceVersion: "3"}, secrets: [{name: sa-token}], automountServiceAccountToken: false}`,
		`{automountServiceAccountToken: false}`},
	{"a PVC without its bound volume, status and binding annotations", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: ns, annotations: {pv.kubernetes.io/bind-completed: "yes"}},
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeName: pv-123}, status: {phase: Bound}}`,
		`{spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}`},
	{"a Secret keeps its type and data", `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}, type: Opaque, data: {k: dg==}}`,
		`{type: Opaque, data: {k: dg==}}`},
}
