package fake_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

func TestStatusSubresource(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)

	// Create drops status for resources with a status subresource.
	obj := deployment("prod", "web", 3)
	obj.Object["status"] = map[string]any{"readyReplicas": int64(3)}
	created := mustCreate(t, c, deployGVR, obj)
	require.NotContains(t, created.Object, "status")

	// UpdateStatus changes only status: spec and labels in the request are ignored.
	req := created.DeepCopy()
	req.Object["status"] = map[string]any{"readyReplicas": int64(2)}
	_ = unstructured.SetNestedField(req.Object, int64(9), "spec", "replicas")
	req.SetLabels(map[string]string{"sneaky": "yes"})
	got, err := c.UpdateStatus(ctx, deployGVR, req)
	require.NoError(t, err)
	require.Equal(t, int64(2), nested(t, got, "status", "readyReplicas"))
	require.Equal(t, int64(3), nested(t, got, "spec", "replicas"))
	require.Equal(t, map[string]string{"app": "web"}, got.GetLabels())
	require.Equal(t, int64(1), got.GetGeneration(), "status writes never bump generation")

	// UpdateStatus has the same Conflict rule.
	_, err = c.UpdateStatus(ctx, deployGVR, created)
	require.True(t, apierrors.IsConflict(err), "stale UpdateStatus = %v", err)

	// Update ignores status: the stored one stays.
	req = got.DeepCopy()
	req.Object["status"] = map[string]any{"readyReplicas": int64(0)}
	_ = unstructured.SetNestedField(req.Object, int64(4), "spec", "replicas")
	got, err = c.Update(ctx, deployGVR, req)
	require.NoError(t, err)
	require.Equal(t, int64(2), nested(t, got, "status", "readyReplicas"))
	require.Equal(t, int64(4), nested(t, got, "spec", "replicas"))

	// An Update that removes status keeps it too.
	delete(got.Object, "status")
	got, err = c.Update(ctx, deployGVR, got)
	require.NoError(t, err)
	require.Equal(t, int64(2), nested(t, got, "status", "readyReplicas"))
}

func TestResourceWithoutStatusSubresource(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	cm := configMap("prod", "cfg", map[string]any{"k": "v"})
	cm.Object["status"] = map[string]any{"odd": "not stored"}
	var warnings []string
	created, err := c.Create(federation.WithWarningHandler(ctx, func(w string) { warnings = append(warnings, w) }), configMapGVR, cm)
	require.NoError(t, err)
	require.NotContains(t, created.Object, "status", "a ConfigMap has no status: the real server drops it")
	require.Equal(t, []string{`unknown field "status"`}, warnings)

	_, err = c.UpdateStatus(ctx, configMapGVR, created)
	require.True(t, apierrors.IsNotFound(err), "UpdateStatus without a /status endpoint = %v", err)

	delete(created.Object, "status")
	got, err := c.Update(ctx, configMapGVR, created)
	require.NoError(t, err)
	require.NotContains(t, got.Object, "status", "Update replaces everything")
}

func TestSetStatusSubresourceOverride(t *testing.T) {
	c := newCluster(t, "c")
	c.SetStatusSubresource(widgetGVR.GroupResource(), false)
	w := widget("prod", "w", 1)
	w.Object["status"] = map[string]any{"phase": "Given"}
	got := mustCreate(t, c, widgetGVR, w)
	require.Equal(t, "Given", nested(t, got, "status", "phase"), "kept on create without a status subresource")
}

func TestNodesKeepStatusOnCreate(t *testing.T) {
	c := newCluster(t, "c")
	node := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "n1"},
		"status":   map[string]any{"allocatable": map[string]any{"pods": "110"}},
	}}
	got := mustCreate(t, c, nodeGVR, node)
	require.Equal(t, "110", nested(t, got, "status", "allocatable", "pods"))
}
