package status_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// A Cluster being deleted stays while sync's finalizer holds it, and sync cleans up only in
// clusters that are Ready. So the monitor keeps probing it: a member that was cut off when its
// Cluster was deleted and recovers is Ready again, and sync can orphan (or delete) what it put
// there, instead of giving up after its deletion timeout with everything left behind, every
// deletion of an object placed there held as long (found by the chaos soak, test/soak).
func TestMonitorKeepsProbingALeavingCluster(t *testing.T) {
	e := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	require.NoError(t, e.host.Drift(federation.ClusterGVR, "", "eu", func(u *unstructured.Unstructured) {
		u.SetFinalizers([]string{"federation.k8s.io/sync-federateddeployments"})
	}))
	require.NoError(t, e.fleet.Partition("eu"))
	for range 3 {
		e.probe(t, "eu")
		e.clock.Step(10 * time.Second)
	}
	require.Equal(t, metav1.ConditionFalse, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status)

	require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", "eu", metav1.DeleteOptions{}))
	require.NoError(t, e.fleet.Heal("eu"))
	var res federation.Result
	for range status.DefaultSuccessThreshold {
		e.clock.Step(10 * time.Second)
		res, _ = e.probe(t, "eu")
	}
	require.Equal(t, metav1.ConditionTrue, conditionOf(e.cluster(t, "eu"), federation.ConditionReady).Status, "the leaving cluster is back")
	require.Positive(t, res.RequeueAfter, "and still probed")
}
