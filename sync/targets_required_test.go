package sync_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	fedsync "github.com/fedkit/fedkit/sync"
)

// TestTargetsRequiredClusters: a hand-federated ConfigMap keeps its own clusters and gains
// those its dependent workloads run in (federation.RequiredByClustersAnnotation), and the
// scheduler and sync agree, as both go through placement's Decision.Require.
func TestTargetsRequiredClusters(t *testing.T) {
	clusters := []federation.Cluster{
		readyCluster("aws", true, nil), readyCluster("azure", false, nil), readyCluster("gcp", true, nil),
	}
	for _, tc := range []struct {
		name     string
		required string
		want     []string
	}{
		{"no annotation: its own clusters", "", []string{"aws"}},
		{"the union is added", "gcp", []string{"aws", "gcp"}},
		{"never removed, a not-ready cluster not added", "aws,azure", []string{"aws"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fed := &federation.FederatedObject{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"},
				Spec:       federation.FederatedSpec{Placement: federation.Placement{Clusters: []federation.ClusterReference{{Name: "aws"}}}},
			}
			if tc.required != "" {
				fed.Annotations = map[string]string{federation.RequiredByClustersAnnotation: tc.required}
			}
			targets, err := fedsync.TargetsFor(fed, federation.ConfigMapType, clusters)
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, targets.Order); diff != "" {
				t.Errorf("sync targets (-want +got):\n%s", diff)
			}
			d, err := scheduler.Decide(scheduler.Input{Type: federation.ConfigMapType, Object: fed, Clusters: clusters, Now: time.Unix(0, 0)})
			require.NoError(t, err)
			var scheduled []string
			for _, c := range d.Schedule.Clusters {
				scheduled = append(scheduled, c.Name)
			}
			if diff := cmp.Diff(tc.want, scheduled); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}
