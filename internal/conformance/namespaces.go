package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// namespaceBehaviours: the NamespaceLifecycle admission plugin (objects need an existing,
// active namespace) and the namespaces every cluster has.
func namespaceBehaviours() []behaviour {
	return []behaviour{
		{"namespace/initial-namespaces-exist", func(t *testing.T, e *env) {
			for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
				e.get(t, NamespaceGVR, "", name)
			}
		}},
		{"namespace/create-in-missing-namespace-is-not-found", func(t *testing.T, e *env) {
			missing := e.ns + "-missing"
			_, err := e.c.Create(e.ctx, ConfigMapGVR, configMap(missing, "cfg", nil, nil))
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			require.Equal(t, "namespaces", status.Status().Details.Kind, "the namespace is what is not found")
			require.Equal(t, missing, status.Status().Details.Name)
		}},
		{"namespace/create-in-terminating-namespace-is-forbidden", func(t *testing.T, e *env) {
			ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
			ns.SetName(e.ns + "-term")
			e.create(t, NamespaceGVR, ns)
			held := configMap(ns.GetName(), "held", nil, nil)
			held.SetFinalizers([]string{holdFinalizer})
			e.create(t, ConfigMapGVR, held)
			require.NoError(t, e.c.Delete(e.ctx, NamespaceGVR, "", ns.GetName(), metav1.DeleteOptions{}))
			got := e.get(t, NamespaceGVR, "", ns.GetName())
			require.NotNil(t, got.GetDeletionTimestamp())
			require.Equal(t, "Terminating", str(got, "status", "phase"))

			_, err := e.c.Create(e.ctx, ConfigMapGVR, configMap(ns.GetName(), "new", nil, nil))
			require.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			require.Equal(t, metav1.CauseType("NamespaceTerminating"), status.Status().Details.Causes[0].Type)

			// Updates are not refused: finalizers can still be removed.
			cm := e.get(t, ConfigMapGVR, ns.GetName(), "held")
			cm.SetLabels(map[string]string{"cleanup": "done"})
			cm = e.update(t, ConfigMapGVR, cm)
			cm.SetFinalizers(nil)
			_, err = e.c.Update(e.ctx, ConfigMapGVR, cm)
			require.NoError(t, err)
		}},
		{"namespace/immortal-namespaces-cannot-be-deleted", func(t *testing.T, e *env) {
			err := e.c.Delete(e.ctx, NamespaceGVR, "", "default", metav1.DeleteOptions{})
			require.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)
			require.Contains(t, err.Error(), "this namespace may not be deleted")
		}},
		{"watch/last-finalizer-with-label-change-is-deleted-for-selector", func(t *testing.T, e *env) {
			sel := "fin-watch=" + e.run
			obj := configMap(e.ns, "fin-watch", map[string]string{"fin-watch": e.run}, nil)
			obj.SetFinalizers([]string{holdFinalizer})
			created := e.create(t, ConfigMapGVR, obj)
			w := e.watch(t, ConfigMapGVR, e.ns, metav1.ListOptions{LabelSelector: sel, ResourceVersion: created.GetResourceVersion()})
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "fin-watch", metav1.DeleteOptions{}))
			require.Equal(t, "MODIFIED fin-watch", eventName(e.next(t, w)), "marked deleting")

			deleting := e.get(t, ConfigMapGVR, e.ns, "fin-watch")
			deleting.SetFinalizers(nil)
			deleting.SetLabels(map[string]string{"fin-watch": "moved"})
			out := e.update(t, ConfigMapGVR, deleting)
			require.Equal(t, "moved", out.GetLabels()["fin-watch"], "the update returns the object it sent")
			require.Equal(t, deleting.GetResourceVersion(), out.GetResourceVersion(), "at the resourceVersion it had")

			ev := e.next(t, w)
			require.Equal(t, watch.Deleted, ev.Type, "the stored object is deleted: %s", eventName(ev))
			gone := ev.Object.(*unstructured.Unstructured)
			require.Equal(t, e.run, gone.GetLabels()["fin-watch"], "DELETED carries the last stored state")
			require.Equal(t, []string{holdFinalizer}, gone.GetFinalizers())
			_, err := e.c.Get(e.ctx, ConfigMapGVR, e.ns, "fin-watch")
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
	}
}
