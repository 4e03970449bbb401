package fake_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func TestSeed(t *testing.T) {
	c := newCluster(t, "c")
	d := deployment("prod", "web", 3)
	d.Object["status"] = map[string]any{"readyReplicas": int64(3)}
	d.SetUID("fixed-uid")
	d.SetGeneration(4)
	d.SetResourceVersion("999") // ignored
	cm := configMap("prod", "cfg", nil)
	cm.SetGeneration(3) // configmaps have none
	ingress := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"namespace": "prod", "name": "web"},
	}}
	require.NoError(t, c.Seed(d, cm, ingress))

	got, err := c.Peek(deployGVR, "prod", "web")
	require.NoError(t, err)
	require.Equal(t, int64(3), nested(t, got, "status", "readyReplicas"), "Seed keeps status")
	require.Equal(t, "fixed-uid", string(got.GetUID()))
	require.Equal(t, int64(4), got.GetGeneration())
	require.Equal(t, rv(1), got.GetResourceVersion())
	require.False(t, got.GetCreationTimestamp().Time.IsZero(), "missing fields are filled in")

	gotCM, err := c.Peek(configMapGVR, "prod", "cfg")
	require.NoError(t, err)
	require.Zero(t, gotCM.GetGeneration())
	_, err = c.Peek(schemaIngresses, "prod", "web")
	require.NoError(t, err, "Ingress is stored as ingresses")

	require.True(t, apierrors.IsAlreadyExists(c.Seed(deployment("prod", "web", 1))))
	require.Error(t, c.Seed(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}))
	require.Error(t, c.Seed(nil))
	require.Empty(t, c.Actions())
}

func TestDrift(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	created := mustCreate(t, c, deployGVR, deployment("prod", "web", 3))
	w, err := c.Watch(ctx, deployGVR, "prod", metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	require.NoError(t, err)
	defer w.Stop()
	c.ClearActions()

	// Someone scales the Deployment and writes status, behind the controller's back.
	require.NoError(t, c.Drift(deployGVR, "prod", "web", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(10), "spec", "replicas")
		u.Object["status"] = map[string]any{"replicas": int64(10)}
		u.SetUID("cannot-change")
		u.SetName("cannot-rename")
	}))
	ev := nextEvent(t, w)
	require.Equal(t, watch.Modified, ev.Type)
	got := ev.Object.(*unstructured.Unstructured)
	require.Equal(t, rv(2), got.GetResourceVersion())
	require.Equal(t, int64(2), got.GetGeneration())
	require.Equal(t, int64(10), nested(t, got, "status", "replicas"))
	require.Equal(t, created.GetUID(), got.GetUID())
	require.Equal(t, "web", got.GetName())
	require.Empty(t, c.Actions(), "drift is not the controller's action")

	// The controller's stale write now conflicts.
	_, err = c.Update(ctx, deployGVR, created)
	require.True(t, apierrors.IsConflict(err))

	// A drift that changes nothing writes nothing.
	require.NoError(t, c.Drift(deployGVR, "prod", "web", func(*unstructured.Unstructured) {}))
	require.Equal(t, int64(baseRV+2), c.ResourceVersion())

	require.True(t, apierrors.IsNotFound(c.Drift(deployGVR, "prod", "nope", func(*unstructured.Unstructured) {})))
}

func TestDriftMayCallTheCluster(t *testing.T) {
	c := newCluster(t, "c")
	mustCreate(t, c, configMapGVR, configMap("prod", "cfg", map[string]any{"n": "0"}))
	calls := 0
	require.NoError(t, c.Drift(configMapGVR, "prod", "cfg", func(u *unstructured.Unstructured) {
		calls++
		if calls == 1 {
			// A concurrent write lands between Drift's read and its write: Drift retries.
			require.NoError(t, c.Drift(configMapGVR, "prod", "cfg", func(v *unstructured.Unstructured) {
				v.Object["data"] = map[string]any{"n": "1", "other": "x"}
			}))
		}
		u.Object["data"].(map[string]any)["n"] = "2"
	}))
	require.Equal(t, 2, calls)
	got, err := c.Peek(configMapGVR, "prod", "cfg")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"n": "2", "other": "x"}, got.Object["data"])
}

func TestDriftDelete(t *testing.T) {
	c := newCluster(t, "c")
	mustCreate(t, c, configMapGVR, configMap("prod", "plain", nil))
	withFinalizer := configMap("prod", "held", nil)
	withFinalizer.SetFinalizers([]string{"f"})
	mustCreate(t, c, configMapGVR, withFinalizer)
	c.ClearActions()

	require.NoError(t, c.DriftDelete(configMapGVR, "prod", "plain"))
	require.NoError(t, c.DriftDelete(configMapGVR, "prod", "held"))
	objs := c.Objects(configMapGVR)
	require.Len(t, objs, 1)
	require.NotNil(t, objs[0].GetDeletionTimestamp())

	// The finalizer goes; the object with it.
	require.NoError(t, c.Drift(configMapGVR, "prod", "held", func(u *unstructured.Unstructured) { u.SetFinalizers(nil) }))
	require.Empty(t, c.Objects(configMapGVR))
	require.True(t, apierrors.IsNotFound(c.DriftDelete(configMapGVR, "prod", "held")))
	require.Empty(t, c.Actions())
}
