package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const holdFinalizer = "conformance.fedkit.io/hold"

// metadataBehaviours: the status subresource, finalizers and deletionTimestamp.
func metadataBehaviours() []behaviour {
	return []behaviour{
		{"status/update-ignores-status", func(t *testing.T, e *env) {
			c := e.create(t, ClusterGVR, cluster(e.name("upd-ignores-status")))
			set(t, c, "v9", "status", "kubernetesVersion")
			set(t, c, "ap-south-1", "spec", "region")
			c = e.update(t, ClusterGVR, c)
			require.Equal(t, "ap-south-1", str(c, "spec", "region"))
			require.Empty(t, str(c, "status", "kubernetesVersion"), "Update must not write status")
			require.Empty(t, str(e.get(t, ClusterGVR, "", c.GetName()), "status", "kubernetesVersion"))
		}},
		{"status/update-status-ignores-spec-and-metadata", func(t *testing.T, e *env) {
			c := e.create(t, ClusterGVR, cluster(e.name("status-ignores-spec")))
			set(t, c, "v1.37.2", "status", "kubernetesVersion")
			set(t, c, "changed", "spec", "region")
			c.SetLabels(map[string]string{"via": "status"})
			c, err := e.c.UpdateStatus(e.ctx, ClusterGVR, c)
			require.NoError(t, err)
			got := e.get(t, ClusterGVR, "", c.GetName())
			require.Equal(t, "v1.37.2", str(got, "status", "kubernetesVersion"))
			require.Equal(t, "eu-west-1", str(got, "spec", "region"), "UpdateStatus must not write spec")
			require.Empty(t, got.GetLabels(), "UpdateStatus of a custom resource must not write metadata")
		}},
		{"status/deployment-update-status", func(t *testing.T, e *env) {
			d := e.create(t, DeploymentGVR, deployment(e.ns, "status", 3))
			set(t, d, int64(3), "status", "replicas")
			set(t, d, int64(2), "status", "readyReplicas")
			set(t, d, int64(9), "spec", "replicas")
			_, err := e.c.UpdateStatus(e.ctx, DeploymentGVR, d)
			require.NoError(t, err)
			got := e.get(t, DeploymentGVR, e.ns, "status")
			require.EqualValues(t, 2, num(got, "status", "readyReplicas"))
			require.EqualValues(t, 3, num(got, "spec", "replicas"), "UpdateStatus must not write spec")
		}},
		{"status/update-status-stale-conflicts", func(t *testing.T, e *env) {
			c := e.create(t, ClusterGVR, cluster(e.name("status-stale")))
			stale := c.DeepCopy()
			set(t, c, "us-east-1", "spec", "region")
			e.update(t, ClusterGVR, c)
			set(t, stale, "v1", "status", "kubernetesVersion")
			_, err := e.c.UpdateStatus(e.ctx, ClusterGVR, stale)
			require.True(t, apierrors.IsConflict(err), "want Conflict, got %v", err)
		}},
		{"status/update-status-without-subresource-is-not-found", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "no-status", nil, nil))
			_, err := e.c.UpdateStatus(e.ctx, ConfigMapGVR, created)
			require.True(t, apierrors.IsNotFound(err), "ConfigMaps have no status subresource; want NotFound, got %v", err)
		}},
		{"status/update-status-not-found", func(t *testing.T, e *env) {
			_, err := e.c.UpdateStatus(e.ctx, ClusterGVR, cluster(e.name("status-missing")))
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
		{"finalizers/delete-sets-deletion-timestamp", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "fin", nil, nil)
			obj.SetFinalizers([]string{holdFinalizer})
			e.create(t, ConfigMapGVR, obj)
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "fin", metav1.DeleteOptions{}))

			got := e.get(t, ConfigMapGVR, e.ns, "fin")
			require.NotNil(t, got.GetDeletionTimestamp(), "deletionTimestamp is set")
			require.Equal(t, []string{holdFinalizer}, got.GetFinalizers())

			// Deleting again is fine and changes nothing.
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "fin", metav1.DeleteOptions{}))
			again := e.get(t, ConfigMapGVR, e.ns, "fin")
			require.Equal(t, got.GetDeletionTimestamp(), again.GetDeletionTimestamp())

			// Other changes are still allowed while the object is being deleted.
			again.SetLabels(map[string]string{"cleanup": "running"})
			again = e.update(t, ConfigMapGVR, again)

			// Removing the last finalizer deletes it.
			again.SetFinalizers(nil)
			_, err := e.c.Update(e.ctx, ConfigMapGVR, again)
			require.NoError(t, err)
			_, err = e.c.Get(e.ctx, ConfigMapGVR, e.ns, "fin")
			require.True(t, apierrors.IsNotFound(err), "want NotFound after the last finalizer went, got %v", err)
		}},
		{"finalizers/no-new-finalizers-while-deleting", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "fin-add", nil, nil)
			obj.SetFinalizers([]string{holdFinalizer})
			e.create(t, ConfigMapGVR, obj)
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "fin-add", metav1.DeleteOptions{}))
			got := e.get(t, ConfigMapGVR, e.ns, "fin-add")
			got.SetFinalizers([]string{holdFinalizer, "conformance.fedkit.io/another"})
			_, err := e.c.Update(e.ctx, ConfigMapGVR, got)
			require.True(t, apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "want Invalid or Forbidden, got %v", err)
			got.SetFinalizers(nil)
			_, err = e.c.Update(e.ctx, ConfigMapGVR, got)
			require.NoError(t, err)
		}},
		{"finalizers/deletion-bumps-generation", func(t *testing.T, e *env) {
			c := cluster(e.name("fin-gen"))
			c.SetFinalizers([]string{holdFinalizer})
			c = e.create(t, ClusterGVR, c)
			require.NoError(t, e.c.Delete(e.ctx, ClusterGVR, "", c.GetName(), metav1.DeleteOptions{}))
			got := e.get(t, ClusterGVR, "", c.GetName())
			require.NotNil(t, got.GetDeletionTimestamp())
			require.EqualValues(t, c.GetGeneration()+1, got.GetGeneration(), "setting deletionTimestamp bumps a tracked generation")
			got.SetFinalizers(nil)
			e.update(t, ClusterGVR, got)
		}},
	}
}
