package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// TestTolerationSecondsEndForATaintWithoutTimeAdded: the placement tolerates drain:NoExecute for
// 60 seconds. b is drained with a taint written without timeAdded (kubectl edit, a tool):
// the cluster monitor stamps it when it first sees it, so the toleration ends a minute later
// and b's replicas move; without the stamp they would stay for good.
func TestTolerationSecondsEndForATaintWithoutTimeAdded(t *testing.T) {
	e := newFleetEnv(t, "stages: [{name: all, percentage: 100}]")
	e.editFed(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{
			map[string]any{"key": "drain", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(60)},
		}, "spec", "placement", "tolerations"))
	})
	e.round(t)
	cl, err := e.host.Get(ctx, federation.ClusterGVR, "", "b")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(cl.Object, []any{map[string]any{"key": "drain", "value": "true", "effect": "NoExecute"}}, "spec", "taints"))
	_, err = e.host.Update(ctx, federation.ClusterGVR, cl)
	require.NoError(t, err)
	for range 10 { // within the 60s tolerated
		e.round(t)
		require.Equal(t, int64(2), scheduledIn(e.fed(t))["b"])
	}
	e.until(t, "b's replicas moved when the toleration ended", 6, func(f *federation.FederatedObject) bool {
		return len(f.Status.Schedule.Evictions) == 1 && f.Status.Schedule.Evictions[0].Cluster == "b"
	})
}
