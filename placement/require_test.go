package placement_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// TestRequire: the clusters a dependency's workloads run in are added to what its own
// placement selects, never removed; a not-ready or unknown cluster is not added, and neither
// is one the placement explicitly excludes: an explicit exclusion wins.
func TestRequire(t *testing.T) {
	clusters := []federation.Cluster{
		cluster("a"), cluster("b"), cluster("c"),
		cluster("down", ready(metav1.ConditionFalse, "Unreachable")),
		cluster("gpu", taint("dedicated", "gpu", corev1.TaintEffectNoSchedule)),
		cluster("drained", taint("drain", "true", corev1.TaintEffectNoExecute)),
		cluster("eu", region("eu-west-1")),
	}
	gpu := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name      string
		placement federation.Placement
		running   []string
		required  []string
		want      []string
		excluded  map[string]placement.Rule // the required clusters left out, and why
	}{
		{name: "nothing required keeps the placement", placement: federation.Placement{Clusters: refs("a")}, want: []string{"a"}},
		{name: "required clusters are added", placement: federation.Placement{Clusters: refs("a")}, required: []string{"c", "b"}, want: []string{"a", "b", "c"}},
		{name: "already selected is not repeated", placement: federation.Placement{Clusters: refs("a", "b")}, required: []string{"b", "b"}, want: []string{"a", "b"}},
		{name: "an empty placement gains the union", placement: federation.Placement{Clusters: refs()}, required: []string{"b"}, want: []string{"b"}},
		{name: "not selected by the selector is added", placement: federation.Placement{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, required: []string{"a"}, want: []string{"a"}},
		{name: "excluded by the user stays out", placement: federation.Placement{ClusterSelector: &metav1.LabelSelector{}, ExcludeClusters: []string{"c"}}, required: []string{"c"},
			want: []string{"a", "b", "eu"}, excluded: map[string]placement.Rule{"c": placement.ExcludeClusters}},
		{name: "a taint not tolerated keeps it out", placement: federation.Placement{Clusters: refs("a")}, required: []string{"gpu", "drained"},
			want: []string{"a"}, excluded: map[string]placement.Rule{"gpu": placement.Taint, "drained": placement.Taint}},
		{name: "a tolerated taint does not", placement: federation.Placement{Clusters: refs("a"), Tolerations: []corev1.Toleration{gpu}}, required: []string{"gpu"}, want: []string{"a", "gpu"}},
		{name: "NoSchedule keeps it where it runs", placement: federation.Placement{Clusters: refs("a")}, running: []string{"gpu"}, required: []string{"gpu"}, want: []string{"a", "gpu"}},
		{name: "clusterAffinity.required refuses it", placement: federation.Placement{Clusters: refs("a"), ClusterAffinity: &federation.ClusterAffinity{Required: &federation.AffinityTerm{Regions: []string{"us-east-1"}}}},
			required: []string{"eu"}, want: []string{}, excluded: map[string]placement.Rule{"eu": placement.RequiredAffinity}},
		{name: "not ready stays out", placement: federation.Placement{Clusters: refs("a")}, required: []string{"down"}, want: []string{"a"}, excluded: map[string]placement.Rule{"down": placement.NotReady}},
		{name: "unknown cluster is ignored", placement: federation.Placement{Clusters: refs("a")}, required: []string{"gone"}, want: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := placement.Input{Placement: tc.placement, Clusters: clusters, Running: tc.running}
			d, err := placement.Place(in)
			require.NoError(t, err)
			d.Require(tc.required, in)
			if diff := cmp.Diff(tc.want, d.Names(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
			for _, name := range d.Names() {
				if _, out := d.Why(name); out {
					t.Errorf("%s is selected and still excluded", name)
				}
			}
			for name, rule := range tc.excluded {
				x, out := d.Why(name)
				if !out || x.Rule != rule {
					t.Errorf("Why(%s) = %v, %v; want rule %v", name, x, out, rule)
				}
				if rule != placement.NotReady && !strings.HasPrefix(x.Detail, "required by dependent workloads, but ") {
					t.Errorf("Why(%s).Detail = %q; want it to say the cluster was required", name, x.Detail)
				}
			}
			refused := placement.Refused(in, tc.required)
			for name, rule := range tc.excluded {
				if rule == placement.NotReady {
					continue
				}
				if x, ok := refused[name]; !ok || x.Rule != rule {
					t.Errorf("Refused()[%s] = %v, %v; want rule %v", name, x, ok, rule)
				}
			}
			if n := len(tc.excluded); len(refused) > n || (tc.excluded["down"] != 0 && len(refused) > n-1) {
				t.Errorf("Refused() = %v; want only %v (not ready is no refusal)", refused, tc.excluded)
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
