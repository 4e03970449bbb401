package propagation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/propagation"
)

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
