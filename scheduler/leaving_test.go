package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// A Cluster being deleted is leaving the federation: sync places nothing there any more
// (sync.TargetsFor), so the scheduler must not give it replicas either, or they are lost
// until the Cluster is gone (found by the chaos soak, test/soak: a preference of 6 ran 5).
func TestReconcileLeavesOutClustersBeingDeleted(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs []string
		want map[string]int64
	}{
		{name: "duplicated", docs: []string{frontend}, want: map[string]int64{"aws": 6, "gcp": 6}},
		{name: "preference", docs: []string{frontend, rsp}, want: map[string]int64{"aws": 6, "gcp": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, federation.DeploymentType)
			// Something (sync's cluster finalizer) holds the Cluster while it leaves.
			c, err := e.host.Get(ctx, federation.ClusterGVR, "", "azure")
			require.NoError(t, err)
			c.SetFinalizers([]string{"example.com/hold"})
			_, err = e.host.Update(ctx, federation.ClusterGVR, c)
			require.NoError(t, err)
			require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", "azure", metav1.DeleteOptions{}))
			e.apply(t, federation.DeploymentType.FederatedGVR(), tc.docs[0])
			if len(tc.docs) > 1 {
				e.apply(t, federation.ReplicaSchedulingPreferenceGVR, tc.docs[1])
			}

			_, err = e.s.Reconcile(ctx, key)
			require.NoError(t, err)
			obj := e.federated(t, federation.DeploymentType)
			if diff := cmp.Diff(tc.want, schedule(obj)); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}
