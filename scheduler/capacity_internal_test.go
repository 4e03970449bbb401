package scheduler

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

func TestPodRequests(t *testing.T) {
	tests := []struct {
		name string
		pod  string // spec.template.spec
		want corev1.ResourceList
	}{
		{
			name: "containers summed, the largest init container where larger",
			pod: `
      initContainers: [{name: init, resources: {requests: {memory: 2Gi}}}]
      containers:
      - {name: a, resources: {requests: {cpu: 250m, memory: 512Mi}}}
      - {name: b, resources: {requests: {cpu: 250m, memory: 512Mi}}}`,
			want: corev1.ResourceList{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("2Gi"), "pods": resource.MustParse("1")},
		},
		{
			// A native sidecar runs beside the containers: the kube-scheduler adds it to them,
			// and counts it during the init containers that start after it.
			name: "native sidecars (restartPolicy Always) count with the containers",
			pod: `
      initContainers:
      - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: 100m, memory: 128Mi}}}
      - {name: migrate, resources: {requests: {cpu: "1", memory: 256Mi}}}
      containers:
      - {name: app, resources: {requests: {cpu: 500m, memory: 1Gi}}}`,
			want: corev1.ResourceList{"cpu": resource.MustParse("1100m"), "memory": resource.MustParse("1152Mi"), "pods": resource.MustParse("1")},
		},
		{
			name: "pod overhead is added",
			pod: `
      overhead: {cpu: 50m, memory: 64Mi}
      containers: [{name: app, resources: {requests: {cpu: 500m, memory: 1Gi}}}]`,
			want: corev1.ResourceList{"cpu": resource.MustParse("550m"), "memory": resource.MustParse("1088Mi"), "pods": resource.MustParse("1")},
		},
		{
			name: "no pod spec: one pod",
			want: corev1.ResourceList{"pods": resource.MustParse("1")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := map[string]any{}
			if tc.pod != "" {
				require.NoError(t, yaml.Unmarshal([]byte("spec:\n  template:\n    spec:\n"+tc.pod), &tmpl))
			}
			got, ferr := podRequests(tmpl)
			require.Nil(t, ferr)
			require.True(t, equalResources(tc.want, got), "podRequests = %v; want %v", got, tc.want)
		})
	}

	_, ferr := podRequests(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": "nope"}}}})
	require.NotNil(t, ferr)
	require.Equal(t, "spec.template.spec.template.spec", ferr.Field)
}

func TestHeadroomReplicas(t *testing.T) {
	perReplica := corev1.ResourceList{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("1Gi"), "pods": resource.MustParse("1")}
	tests := []struct {
		name      string
		available corev1.ResourceList
		want      *int64
	}{
		{"the scarcest resource decides", corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("3Gi"), "pods": resource.MustParse("110")}, ptr(3)},
		{"no headroom reported: unknown", nil, nil},
		{"nothing left", corev1.ResourceList{"cpu": resource.MustParse("0")}, ptr(0)},
		{"overcommitted counts as nothing left", corev1.ResourceList{"cpu": resource.MustParse("-2")}, ptr(0)},
		// 9Pi of memory in milli-units is beyond an int64: MilliValue wraps around to a
		// negative number there, which made the request invalid.
		{"9Pi of memory", corev1.ResourceList{"memory": resource.MustParse("9Pi")}, ptr(9 << 20)},
		{"100Pi of memory", corev1.ResourceList{"memory": resource.MustParse("100Pi")}, ptr(100 << 20)},
		{"saturates beyond an int64", corev1.ResourceList{"pods": resource.MustParse("100E")}, ptr(math.MaxInt64)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &federation.Cluster{Status: federation.ClusterStatus{Available: tc.available}}
			got := headroomReplicas(c, perReplica)
			if tc.want == nil {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, *tc.want, *got)
		})
	}
	require.Nil(t, capacityFor(nil, 3), "unknown headroom: unknown capacity")
	require.Equal(t, int64(5), *capacityFor(ptr(2), 3), "headroom plus what runs there")
	require.Equal(t, int64(math.MaxInt64), *capacityFor(ptr(math.MaxInt64), 3), "saturates")
}

func ptr(v int64) *int64 { return &v }

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

func TestClusterState(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name, cost string
		want       *int64
	}{
		{"no cost", "", nil},
		{"decimal", "0.5", i64(500)},
		{"milli", "500m", i64(500)},
		{"rounded up to a milli-unit", "1u", i64(1)},
		{"beyond an int64 in milli-units saturates", "10Ei", i64(math.MaxInt64)},
		{"negative (rejected by ValidateCluster) is unknown", "-1", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "eu"}}
			if tc.cost != "" {
				q := resource.MustParse(tc.cost)
				c.Spec.Cost = &q
			}
			got := clusterState(&c, "eu-west-1")
			want := ClusterState{Name: "eu", Cost: tc.want, Domain: "eu-west-1"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("clusterState() (-want +got):\n%s", diff)
			}
		})
	}
}
