package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// TestRollbackRestoresWhatRan: Rollback brings back revision 1's template and leaves where
// the object goes and how many replicas run as they are now: azure, excluded since, stays
// excluded, and the template keeps its new replica count. RestorePlacement is the explicit
// choice to put it back where revision 1 was too.
func TestRollbackRestoresWhatRan(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	e.edit(t, func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters"))
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(5), "spec", "template", "spec", "replicas"))
	})
	e.reconcile(t)
	require.False(t, e.exists(t, "azure"))

	require.NoError(t, fedsync.Rollback(ctx, e.host, e.typ, key, 1))
	e.reconcile(t)
	f := e.fed(t)
	require.Equal(t, []federation.ClusterReference{{Name: "aws"}, {Name: "gcp"}}, f.Spec.Placement.Clusters, "the placement stays the user's")
	for _, c := range []string{"aws", "gcp"} {
		require.Equal(t, frontendImage, image(t, e.member(t, c)), c)
	}
	require.EqualValues(t, 5, replicas(e.member(t, "aws")), "the template keeps its replica count")
	require.EqualValues(t, 4, replicas(e.member(t, "gcp")), "revision 1's override")
	require.False(t, e.exists(t, "azure"), "a rollback does not place the object back in an excluded cluster")

	require.NoError(t, fedsync.RollbackWith(ctx, e.host, e.typ, key, 1, fedsync.RollbackOptions{RestorePlacement: true}))
	e.reconcile(t)
	require.Len(t, e.fed(t).Spec.Placement.Clusters, 3)
	require.Equal(t, frontendImage, image(t, e.member(t, "azure")), "RestorePlacement puts it back")
}

// exists reports whether the cluster has the member object of key.
func (e *env) exists(t *testing.T, cluster string) bool {
	t.Helper()
	c, ok := e.fleet.Member(cluster)
	require.True(t, ok, cluster)
	_, err := c.Peek(deployments, key.Namespace, key.Name)
	return err == nil
}
