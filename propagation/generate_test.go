package propagation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/propagation"
)

// TestTemplate: the template is the native object without server fields, status, fedkit's
// and the clients' bookkeeping, and the fields the server assigns per cluster.
func TestTemplate(t *testing.T) {
	for _, tc := range []struct{ name, native, want string }{
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
apiVersion: apps/v1
kind: Deployment
metadata: {labels: {app: web}, annotations: {note: keep}}
spec: {replicas: 2}`},
		{"service: no cluster IPs", `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1], ports: [{port: 80}]}`, `
apiVersion: v1
kind: Service
metadata: {}
spec: {ports: [{port: 80}]}`},
		{"job: no generated selector", `
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: shop}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u1}}
  template:
    metadata: {labels: {app: once, batch.kubernetes.io/controller-uid: u1, batch.kubernetes.io/job-name: once, controller-uid: u1, job-name: once}}`, `
apiVersion: batch/v1
kind: Job
metadata: {}
spec:
  template:
    metadata: {labels: {app: once}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := propagation.Template(decode(t, tc.native))
			if diff := cmp.Diff(decode(t, tc.want).Object, got); diff != "" {
				t.Errorf("Template (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNativeStatus: the aggregate's counts, and observedGeneration only once the generated
// object's Ready condition observed its generation, rendered from the native one's.
func TestNativeStatus(t *testing.T) {
	native := decode(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 4}}`)
	fed := func(annotationGen string, fedGen, readyObserved int) string {
		return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, generation: ` + itoa(fedGen) + `, annotations: {federation.k8s.io/source-generation: "` + annotationGen + `"}}
status:
  aggregated: {replicas: 4, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 4, clusters: 2, staleClusters: 0}
  conditions: [{type: Ready, status: "False", reason: R, message: m, lastTransitionTime: "2026-12-01T00:00:00Z", observedGeneration: ` + itoa(readyObserved) + `}]`
	}
	counts := map[string]int64{"replicas": 4, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 4}
	withGen := map[string]int64{"replicas": 4, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 4, "observedGeneration": 4}
	for _, tc := range []struct {
		name string
		fed  string
		want map[string]int64
	}{
		{"observed", fed("4", 2, 2), withGen},
		{"Ready not at the generated object's generation yet", fed("4", 2, 1), counts},
		{"rendered from an older native generation", fed("3", 2, 2), counts},
		{"no aggregate yet", `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment, metadata: {name: web}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := propagation.NativeStatus(native, decode(t, tc.fed))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NativeStatus (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := propagation.NativeStatus(decode(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: web}}`), decode(t, fed("4", 2, 2))); ok {
		t.Error("a ConfigMap has no replica status")
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// decode reads YAML as an API server's JSON decoder does (integers as int64).
func decode(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(data))
	return u
}
