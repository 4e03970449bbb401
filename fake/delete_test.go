package fake_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestFinalizers(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	obj := widget("prod", "w", 1)
	obj.SetFinalizers([]string{"a.example.com/one", "a.example.com/two"})
	created := mustCreate(t, c, widgetGVR, obj)

	w, err := c.Watch(ctx, widgetGVR, "prod", metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	require.NoError(t, err)
	defer w.Stop()

	// Delete marks it deleting and keeps it.
	require.NoError(t, c.Delete(ctx, widgetGVR, "prod", "w", noDeleteOptions))
	got, err := c.Get(ctx, widgetGVR, "prod", "w")
	require.NoError(t, err)
	require.NotNil(t, got.GetDeletionTimestamp())
	require.Equal(t, int64(2), got.GetGeneration(), "marking deleting bumps generation")
	ev := nextEvent(t, w)
	require.Equal(t, watch.Modified, ev.Type)

	// Deleting again changes nothing.
	rv := c.ResourceVersion()
	require.NoError(t, c.Delete(ctx, widgetGVR, "prod", "w", noDeleteOptions))
	require.Equal(t, rv, c.ResourceVersion())

	// No new finalizer may be added now.
	add := got.DeepCopy()
	add.SetFinalizers(append(add.GetFinalizers(), "late"))
	_, err = c.Update(ctx, widgetGVR, add)
	require.True(t, apierrors.IsInvalid(err), "adding a finalizer while deleting = %v", err)

	// Removing one finalizer keeps the object; spec changes are still allowed.
	got.SetFinalizers([]string{"a.example.com/two"})
	got, err = c.Update(ctx, widgetGVR, got)
	require.NoError(t, err)
	require.Equal(t, watch.Modified, nextEvent(t, w).Type)

	// Removing the last one deletes it and emits Deleted with the last stored state, at a
	// new resourceVersion; the update returns what it sent, at the resourceVersion it had.
	got.SetFinalizers(nil)
	final, err := c.Update(ctx, widgetGVR, got)
	require.NoError(t, err)
	require.Empty(t, final.GetFinalizers())
	require.Equal(t, got.GetResourceVersion(), final.GetResourceVersion())
	ev = nextEvent(t, w)
	require.Equal(t, watch.Deleted, ev.Type)
	require.Equal(t, strconv.FormatInt(c.ResourceVersion(), 10), ev.Object.(metav1.Object).GetResourceVersion())
	require.Equal(t, []string{"a.example.com/two"}, ev.Object.(metav1.Object).GetFinalizers())
	_, err = c.Get(ctx, widgetGVR, "prod", "w")
	require.True(t, apierrors.IsNotFound(err), "Get after the last finalizer = %v", err)
}

func TestFinalizerRemovedByPatchDeletes(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	cm := configMap("prod", "cfg", nil)
	cm.SetFinalizers([]string{"f"})
	mustCreate(t, c, configMapGVR, cm)
	require.NoError(t, c.Delete(ctx, configMapGVR, "prod", "cfg", noDeleteOptions))
	_, err := c.Patch(ctx, configMapGVR, "prod", "cfg", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	require.NoError(t, err)
	require.Empty(t, c.Objects(configMapGVR))
}

func TestDeleteOptions(t *testing.T) {
	stale := "1"
	otherUID := types.UID("other")
	tests := []struct {
		name    string
		opts    func(created metav1.Object) metav1.DeleteOptions
		wantErr func(error) bool
		gone    bool
	}{
		{
			name: "no preconditions",
			opts: func(metav1.Object) metav1.DeleteOptions { return metav1.DeleteOptions{} },
			gone: true,
		},
		{
			name: "matching preconditions",
			opts: func(o metav1.Object) metav1.DeleteOptions {
				uid, rv := o.GetUID(), o.GetResourceVersion()
				return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
			},
			gone: true,
		},
		{
			name: "stale resourceVersion",
			opts: func(metav1.Object) metav1.DeleteOptions {
				return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}
			},
			wantErr: apierrors.IsConflict,
		},
		{
			name: "other uid",
			opts: func(metav1.Object) metav1.DeleteOptions {
				return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &otherUID}}
			},
			wantErr: apierrors.IsConflict,
		},
		{
			name: "dry run",
			opts: func(metav1.Object) metav1.DeleteOptions {
				return metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			ctx := testCtx(t)
			mustCreate(t, c, configMapGVR, configMap("prod", "x", nil)) // bump rv so "1" is stale
			created := mustCreate(t, c, configMapGVR, configMap("prod", "cfg", nil))
			err := c.Delete(ctx, configMapGVR, "prod", "cfg", tc.opts(created))
			if tc.wantErr != nil {
				require.True(t, tc.wantErr(err), "Delete = %v", err)
			} else {
				require.NoError(t, err)
			}
			_, err = c.Get(ctx, configMapGVR, "prod", "cfg")
			require.Equal(t, tc.gone, apierrors.IsNotFound(err), "gone after Delete: err = %v", err)
		})
	}
}

// TestLastFinalizerRemovalReachesSelectedWatch: an update that removes the last finalizer of
// a deleting object and changes its labels deletes the stored object, so a watch selecting
// the labels it had gets Deleted, with the last stored state at a new resourceVersion, as
// from a real server (internal/conformance has the same case). The update itself returns the
// object it sent, at the resourceVersion it had.
func TestLastFinalizerRemovalReachesSelectedWatch(t *testing.T) {
	for _, verb := range []string{"update", "patch", "drift"} {
		t.Run(verb, func(t *testing.T) {
			c := newCluster(t, "c")
			ctx := testCtx(t)
			obj := configMap("prod", "cfg", nil)
			obj.SetLabels(map[string]string{"sel": "a"})
			obj.SetFinalizers([]string{"example.com/hold"})
			created := mustCreate(t, c, configMapGVR, obj)
			w, err := c.Watch(ctx, configMapGVR, "prod", metav1.ListOptions{LabelSelector: "sel=a", ResourceVersion: created.GetResourceVersion()})
			require.NoError(t, err)
			defer w.Stop()
			require.NoError(t, c.Delete(ctx, configMapGVR, "prod", "cfg", noDeleteOptions))
			require.Equal(t, watch.Modified, nextEvent(t, w).Type)

			deleting, err := c.Get(ctx, configMapGVR, "prod", "cfg")
			require.NoError(t, err)
			switch verb {
			case "update":
				next := deleting.DeepCopy()
				next.SetFinalizers(nil)
				next.SetLabels(map[string]string{"sel": "b"})
				out, err := c.Update(ctx, configMapGVR, next)
				require.NoError(t, err)
				require.Equal(t, map[string]string{"sel": "b"}, out.GetLabels(), "the update returns what it sent")
				require.Equal(t, deleting.GetResourceVersion(), out.GetResourceVersion())
			case "patch":
				_, err := c.Patch(ctx, configMapGVR, "prod", "cfg", types.MergePatchType, []byte(`{"metadata":{"finalizers":null,"labels":{"sel":"b"}}}`))
				require.NoError(t, err)
			case "drift":
				require.NoError(t, c.Drift(configMapGVR, "prod", "cfg", func(u *unstructured.Unstructured) {
					u.SetFinalizers(nil)
					u.SetLabels(map[string]string{"sel": "b"})
				}))
			}

			ev := nextEvent(t, w)
			require.Equal(t, watch.Deleted, ev.Type, "the selector sees the stored object go")
			gone := ev.Object.(*unstructured.Unstructured)
			require.Equal(t, map[string]string{"sel": "a"}, gone.GetLabels(), "Deleted carries the last stored state")
			require.Equal(t, []string{"example.com/hold"}, gone.GetFinalizers())
			require.Equal(t, strconv.FormatInt(c.ResourceVersion(), 10), gone.GetResourceVersion())
			_, err = c.Get(ctx, configMapGVR, "prod", "cfg")
			require.True(t, apierrors.IsNotFound(err), "Get = %v", err)
		})
	}
}
