package status_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// TestCollectorCutOffClusterGoesStaleWhileItsClusterSaysReady: nothing rewrites the Cluster of
// a cut-off member (the monitor is disabled, or its shard is unclaimed), so its Ready
// condition stays True, and its member cache keeps serving its last state. The cache's own
// health says it lost contact: the entry goes stale after StaleAfter, and fresh again once the
// member is back.
func TestCollectorCutOffClusterGoesStaleWhileItsClusterSaysReady(t *testing.T) {
	e := newEnv(t, status.Options{})
	c, err := status.New(e.host, e.fleet, federation.DeploymentType, status.Options{Clock: e.clock})
	require.NoError(t, err)
	e.federate(t, []string{"a", "b", "c"}, []int64{1, 1, 1})
	pass := func() *federation.FederatedObject {
		t.Helper()
		_, err := c.Reconcile(ctx, key)
		require.NoError(t, err)
		return e.get(t)
	}
	fed := pass()
	require.False(t, fed.Status.Clusters[2].Stale)

	require.NoError(t, e.fleet.Partition("c"))
	e.step(30 * time.Second)
	fed = pass()
	require.False(t, fed.Status.Clusters[2].Stale, "within StaleAfter of the last contact: still fresh")

	e.step(90 * time.Second)
	fed = pass()
	cl, err := e.host.Peek(federation.ClusterGVR, "", "c")
	require.NoError(t, err)
	cluster, err := federation.ClusterFromUnstructured(cl)
	require.NoError(t, err)
	require.Equal(t, metav1.ConditionTrue, readyCondStatus(cluster.Status.Conditions), "the Cluster still says Ready")
	require.True(t, fed.Status.Clusters[2].Stale, "a cache cut off for more than StaleAfter serves stale data")
	ready := readyOf(fed)
	require.Equal(t, status.ReasonStale, ready.Reason, ready.Message)
	require.Equal(t, int32(1), fed.Status.Aggregated.StaleClusters)

	require.NoError(t, e.fleet.Heal("c"))
	e.step(30 * time.Second)
	fed = pass()
	require.False(t, fed.Status.Clusters[2].Stale, "back in contact: fresh again")
}

func readyCondStatus(conds []metav1.Condition) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == federation.ConditionReady {
			return c.Status
		}
	}
	return ""
}
