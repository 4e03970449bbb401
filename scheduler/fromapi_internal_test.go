package scheduler

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

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
