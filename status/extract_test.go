package status_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/status"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// printed is an Observation as the golden files show it.
type printed struct {
	Replicas           *int64         `json:"replicas,omitempty"`
	ReadyReplicas      *int64         `json:"readyReplicas,omitempty"`
	AvailableReplicas  *int64         `json:"availableReplicas,omitempty"`
	UpdatedReplicas    *int64         `json:"updatedReplicas,omitempty"`
	ObservedGeneration *int64         `json:"observedGeneration,omitempty"`
	Remote             map[string]any `json:"remote,omitempty"`
	Ready              bool           `json:"ready"`
	Progressing        bool           `json:"progressing,omitempty"`
	Message            string         `json:"message,omitempty"`
	Error              string         `json:"error,omitempty"`
}

// decode reads a YAML object as the API machinery decodes JSON (integers as int64).
func decode(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	require.NoError(t, obj.UnmarshalJSON(j))
	return obj
}

func extractorOf(gk schema.GroupKind) status.Extractor {
	if e, ok := status.DefaultExtractors()[gk]; ok {
		return e
	}
	return status.GenericStatus
}

// TestExtractGolden runs the extractor of each member object under testdata/extract (by its
// kind, the default table or GenericStatus) and compares the Observation with the .golden
// file next to it. Refresh with go test ./status -run TestExtractGolden -update.
func TestExtractGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/extract/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			in, err := os.ReadFile(file)
			require.NoError(t, err)
			obj := decode(t, string(in))
			before := obj.DeepCopy()

			o, err := extractorOf(obj.GroupVersionKind().GroupKind())(obj)
			require.Empty(t, cmp.Diff(before.Object, obj.Object), "the extractor modified its input")
			p := printed{o.Replicas, o.ReadyReplicas, o.AvailableReplicas, o.UpdatedReplicas, o.ObservedGeneration, o.Remote, o.Ready, o.Progressing, o.Message, ""}
			if err != nil {
				p = printed{Error: err.Error()}
			}
			got, err := yaml.Marshal(p)
			require.NoError(t, err)

			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create it")
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("extract %s (-want +got):\n%s", file, diff)
			}
		})
	}
}

// TestExtractInvalid: a field of the wrong type in a known kind is an error that wraps
// ErrInvalidMemberStatus and names the field; it never panics.
func TestExtractInvalid(t *testing.T) {
	tests := []struct {
		name    string
		extract status.Extractor
		doc     string
		want    string
	}{
		{"deployment replicas as string", status.DeploymentStatus,
			`{apiVersion: apps/v1, kind: Deployment, metadata: {name: a, generation: 1}, status: {replicas: "3"}}`,
			"status.replicas: want an integer, got a string"},
		{"deployment spec.replicas as object", status.DeploymentStatus,
			`{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {replicas: {n: 1}}}`,
			"spec.replicas: want an integer, got an object"},
		{"deployment status as string", status.DeploymentStatus,
			`{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, status: "broken"}`,
			"status.replicas: .status.replicas accessor error"},
		{"replicaset fractional", status.ReplicaSetStatus,
			`{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: a}, status: {readyReplicas: 1.5}}`,
			"status.readyReplicas: want an integer, got a fractional number"},
		{"statefulset partition as bool", status.StatefulSetStatus,
			`{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: a}, spec: {updateStrategy: {rollingUpdate: {partition: true}}}}`,
			"spec.updateStrategy.rollingUpdate.partition: want an integer, got a boolean"},
		{"daemonset array", status.DaemonSetStatus,
			`{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: a}, status: {numberReady: [1]}}`,
			"status.numberReady: want an integer, got an array"},
		{"job active as string", status.JobStatus,
			`{apiVersion: batch/v1, kind: Job, metadata: {name: a}, status: {active: "2"}}`,
			"status.active: want an integer, got a string"},
		{"service loadBalancer as list", status.ServiceStatus,
			`{apiVersion: v1, kind: Service, metadata: {name: a}, status: {loadBalancer: []}}`,
			"status.loadBalancer: want an object, got an array"},
		{"service ingress as object", status.ServiceStatus,
			`{apiVersion: v1, kind: Service, metadata: {name: a}, status: {loadBalancer: {ingress: {ip: x}}}}`,
			"status.loadBalancer.ingress: want an array, got an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.extract(decode(t, tt.doc))
			require.Error(t, err)
			require.True(t, errors.Is(err, status.ErrInvalidMemberStatus), "%v does not wrap ErrInvalidMemberStatus", err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestExtractAcceptsNumberTypes: hand-built objects carry int, int32 or integral float64 where
// decoded JSON has int64; all are counts.
func TestExtractAcceptsNumberTypes(t *testing.T) {
	for _, v := range []any{int64(3), 3, int32(3), float64(3)} {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "a", "generation": int64(1)},
			"spec":     map[string]any{"replicas": v},
			"status": map[string]any{"observedGeneration": v, "replicas": v, "updatedReplicas": v,
				"readyReplicas": v, "availableReplicas": v},
		}}
		o, err := status.DeploymentStatus(obj)
		require.NoError(t, err, "%T", v)
		require.True(t, o.Ready, "%T: %s", v, o.Message)
		require.Equal(t, int64(3), *o.AvailableReplicas)
	}
}
