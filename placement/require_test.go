package placement_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// TestRequire: the clusters a dependency's workloads run in are added to what its own
// placement selects, never removed; a not-ready or unknown cluster is not added.
func TestRequire(t *testing.T) {
	clusters := []federation.Cluster{
		cluster("a"), cluster("b"), cluster("c"),
		cluster("down", ready(metav1.ConditionFalse, "Unreachable")),
	}
	for _, tc := range []struct {
		name      string
		placement federation.Placement
		required  []string
		want      []string
	}{
		{"nothing required keeps the placement", federation.Placement{Clusters: refs("a")}, nil, []string{"a"}},
		{"required clusters are added", federation.Placement{Clusters: refs("a")}, []string{"c", "b"}, []string{"a", "b", "c"}},
		{"already selected is not repeated", federation.Placement{Clusters: refs("a", "b")}, []string{"b", "b"}, []string{"a", "b"}},
		{"an empty placement gains the union", federation.Placement{Clusters: refs()}, []string{"b"}, []string{"b"}},
		{"excluded by the user still follows its workload", federation.Placement{ClusterSelector: &metav1.LabelSelector{}, ExcludeClusters: []string{"c"}}, []string{"c"}, []string{"a", "b", "c"}},
		{"not ready stays out", federation.Placement{Clusters: refs("a")}, []string{"down"}, []string{"a"}},
		{"unknown cluster is ignored", federation.Placement{Clusters: refs("a")}, []string{"gone"}, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := placement.Evaluate(tc.placement, clusters)
			require.NoError(t, err)
			d.Require(tc.required, clusters)
			if diff := cmp.Diff(tc.want, d.Names()); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			for _, name := range d.Names() {
				if _, out := d.Why(name); out {
					t.Errorf("%s is selected and still excluded", name)
				}
			}
		})
	}
}

// TestRequiredClusters reads the annotation the dependencies loop writes.
func TestRequiredClusters(t *testing.T) {
	got := federation.RequiredClusters(map[string]string{federation.RequiredByClustersAnnotation: " b,a,,b "})
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Error(diff)
	}
	require.Nil(t, federation.RequiredClusters(nil))
	require.Equal(t, "a,b", federation.FormatRequiredClusters([]string{"b", "a", "b"}))
}
