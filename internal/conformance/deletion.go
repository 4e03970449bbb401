package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// JobGVR and ReplicationControllerGVR are the resources whose deletion orphans their Pods by
// default.
var (
	JobGVR                   = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	ReplicationControllerGVR = schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}
)

// deletionBehaviours: the garbage collector's finalizers that a delete's propagationPolicy
// (or the kind's default) puts on the object. No garbage collector runs against a bare
// API server, so an object that gets one stays, deleting, until the finalizer is removed.
func deletionBehaviours() []behaviour {
	return []behaviour{
		{"deletion/job-default-orphans", func(t *testing.T, e *env) {
			// batch/v1 Jobs keep their old default: orphan the Pods.
			e.create(t, JobGVR, job(e.ns, "default"))
			require.NoError(t, e.c.Delete(e.ctx, JobGVR, e.ns, "default", metav1.DeleteOptions{}))
			got := e.get(t, JobGVR, e.ns, "default")
			require.NotNil(t, got.GetDeletionTimestamp())
			require.Equal(t, []string{metav1.FinalizerOrphanDependents}, got.GetFinalizers())
			release(t, e, JobGVR, got)
		}},
		{"deletion/replicationcontroller-default-orphans", func(t *testing.T, e *env) {
			// So do v1 ReplicationControllers.
			e.create(t, ReplicationControllerGVR, replicationController(e.ns, "default"))
			require.NoError(t, e.c.Delete(e.ctx, ReplicationControllerGVR, e.ns, "default", metav1.DeleteOptions{}))
			got := e.get(t, ReplicationControllerGVR, e.ns, "default")
			require.Equal(t, []string{metav1.FinalizerOrphanDependents}, got.GetFinalizers())
			release(t, e, ReplicationControllerGVR, got)
		}},
		{"deletion/background-deletes-at-once", func(t *testing.T, e *env) {
			e.create(t, JobGVR, job(e.ns, "background"))
			require.NoError(t, e.c.Delete(e.ctx, JobGVR, e.ns, "background", propagation(metav1.DeletePropagationBackground)))
			_, err := e.c.Get(e.ctx, JobGVR, e.ns, "background")
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
		{"deletion/background-keeps-other-finalizers-only", func(t *testing.T, e *env) {
			obj := job(e.ns, "held")
			obj.SetFinalizers([]string{holdFinalizer})
			e.create(t, JobGVR, obj)
			require.NoError(t, e.c.Delete(e.ctx, JobGVR, e.ns, "held", propagation(metav1.DeletePropagationBackground)))
			got := e.get(t, JobGVR, e.ns, "held")
			require.NotNil(t, got.GetDeletionTimestamp())
			require.Equal(t, []string{holdFinalizer}, got.GetFinalizers(), "no orphan finalizer")
			release(t, e, JobGVR, got)
		}},
		{"deletion/foreground-adds-its-finalizer", func(t *testing.T, e *env) {
			e.create(t, DeploymentGVR, deployment(e.ns, "foreground", 1))
			require.NoError(t, e.c.Delete(e.ctx, DeploymentGVR, e.ns, "foreground", propagation(metav1.DeletePropagationForeground)))
			got := e.get(t, DeploymentGVR, e.ns, "foreground")
			require.NotNil(t, got.GetDeletionTimestamp())
			require.Equal(t, []string{metav1.FinalizerDeleteDependents}, got.GetFinalizers())
			release(t, e, DeploymentGVR, got)
		}},
		{"deletion/orphan-adds-its-finalizer", func(t *testing.T, e *env) {
			e.create(t, DeploymentGVR, deployment(e.ns, "orphan", 1))
			require.NoError(t, e.c.Delete(e.ctx, DeploymentGVR, e.ns, "orphan", propagation(metav1.DeletePropagationOrphan)))
			got := e.get(t, DeploymentGVR, e.ns, "orphan")
			require.Equal(t, []string{metav1.FinalizerOrphanDependents}, got.GetFinalizers())
			release(t, e, DeploymentGVR, got)
		}},
		{"deletion/deployment-default-deletes-at-once", func(t *testing.T, e *env) {
			e.create(t, DeploymentGVR, deployment(e.ns, "default", 1))
			require.NoError(t, e.c.Delete(e.ctx, DeploymentGVR, e.ns, "default", metav1.DeleteOptions{}))
			_, err := e.c.Get(e.ctx, DeploymentGVR, e.ns, "default")
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
		{"deletion/again-changes-the-policy", func(t *testing.T, e *env) {
			obj := job(e.ns, "again")
			obj.SetFinalizers([]string{holdFinalizer})
			e.create(t, JobGVR, obj)
			require.NoError(t, e.c.Delete(e.ctx, JobGVR, e.ns, "again", metav1.DeleteOptions{}))
			got := e.get(t, JobGVR, e.ns, "again")
			require.Equal(t, []string{holdFinalizer, metav1.FinalizerOrphanDependents}, got.GetFinalizers())
			// A second delete with another policy replaces the garbage collector's finalizer.
			require.NoError(t, e.c.Delete(e.ctx, JobGVR, e.ns, "again", propagation(metav1.DeletePropagationBackground)))
			again := e.get(t, JobGVR, e.ns, "again")
			require.Equal(t, []string{holdFinalizer}, again.GetFinalizers())
			require.Equal(t, got.GetDeletionTimestamp(), again.GetDeletionTimestamp(), "the deletion keeps its timestamp")
			release(t, e, JobGVR, again)
		}},
	}
}

func propagation(p metav1.DeletionPropagation) metav1.DeleteOptions {
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

// release removes every finalizer of obj, which then goes, as the garbage collector would
// have done.
func release(t *testing.T, e *env, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	t.Helper()
	obj.SetFinalizers(nil)
	_, err := e.c.Update(e.ctx, gvr, obj)
	require.NoError(t, err)
	_, err = e.c.Get(e.ctx, gvr, obj.GetNamespace(), obj.GetName())
	require.True(t, apierrors.IsNotFound(err), "want NotFound once the finalizers are gone, got %v", err)
}

// job is a batch/v1 Job that a bare API server accepts.
func job(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"namespace": namespace, "name": name},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"restartPolicy": "Never",
			"containers":    []any{map[string]any{"name": "main", "image": "busybox:1.36"}},
		}}},
	}}
}

// replicationController is a v1 ReplicationController of no replicas.
func replicationController(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ReplicationController",
		"metadata": map[string]any{"namespace": namespace, "name": name},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"app": name},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}}},
			},
		},
	}}
}
