package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

func TestClusterTopology(t *testing.T) {
	labels := map[string]string{federation.RegionLabel: "label-r", federation.ZoneLabel: "label-z", federation.ProviderLabel: "label-p"}
	for _, tc := range []struct {
		name     string
		c        federation.Cluster
		region   string
		zones    []string
		provider string
	}{
		{"nothing known", federation.Cluster{}, "", nil, ""},
		{"labels", federation.Cluster{ObjectMeta: metav1.ObjectMeta{Labels: labels}}, "label-r", []string{"label-z"}, "label-p"},
		{"status wins over labels", federation.Cluster{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Status: federation.ClusterStatus{Region: "status-r", Zones: []string{"s1", "s2"}}}, "status-r", []string{"s1", "s2"}, "label-p"},
		{"spec wins over all", federation.Cluster{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:   federation.ClusterSpec{Region: "spec-r", Zones: []string{"a"}, Provider: "aws"},
			Status: federation.ClusterStatus{Region: "status-r", Zones: []string{"s1"}}}, "spec-r", []string{"a"}, "aws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []any{tc.c.Region(), tc.c.Zones(), tc.c.Provider()}
			if diff := cmp.Diff([]any{tc.region, tc.zones, tc.provider}, got); diff != "" {
				t.Errorf("topology (-want +got):\n%s", diff)
			}
		})
	}
	c := federation.Cluster{Spec: federation.ClusterSpec{Zones: []string{"a"}}}
	c.Zones()[0] = "changed"
	if c.Spec.Zones[0] != "a" {
		t.Error("Zones returned the spec's own slice")
	}
}
