package placement_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// BenchmarkEvaluate measures placement over fleets of C clusters in 20 regions and 3
// providers:
//
//   - all: a {} selector, nothing else;
//   - spread: one constraint, minGroups 3 over regions, maxClusters 10;
//   - two: minGroups 3 over regions and 3 over providers, maxClusters 5;
//   - maxgroups: maxGroups 2 over regions, minGroups 2 over providers.
//
// Run it with go test -run '^$' -bench Evaluate -benchmem ./placement.
func BenchmarkEvaluate(b *testing.B) {
	cases := []struct {
		name string
		p    federation.Placement
	}{
		{"all", federation.Placement{ClusterSelector: &metav1.LabelSelector{}}},
		{"spread", federation.Placement{ClusterSelector: &metav1.LabelSelector{}, MaxClusters: int32p(10),
			SpreadConstraints: []federation.SpreadConstraint{{TopologyKey: "region", MinGroups: 3}}}},
		{"two", federation.Placement{ClusterSelector: &metav1.LabelSelector{}, MaxClusters: int32p(5),
			SpreadConstraints: []federation.SpreadConstraint{{TopologyKey: "region", MinGroups: 3}, {TopologyKey: "provider", MinGroups: 3}}}},
		{"maxgroups", federation.Placement{ClusterSelector: &metav1.LabelSelector{},
			SpreadConstraints: []federation.SpreadConstraint{{TopologyKey: "region", MaxGroups: 2}, {TopologyKey: "provider", MinGroups: 2}}}},
	}
	for _, n := range []int{1000, 5000} {
		fleet := make([]federation.Cluster, n)
		for i := range fleet {
			fleet[i] = cluster(fmt.Sprintf("cluster-%05d", i), region(fmt.Sprintf("region-%02d", i%20), fmt.Sprintf("zone-%d", i%60)),
				provider([]string{"aws", "gcp", "azure"}[i%3]))
		}
		for _, tc := range cases {
			b.Run(fmt.Sprintf("%s/C=%d", tc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := placement.Evaluate(tc.p, fleet); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
