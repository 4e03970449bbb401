package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const holdFinalizer = "conformance.fedkit.io/hold"

// metadataBehaviours: generation, the status subresource, finalizers and deletionTimestamp.
func metadataBehaviours() []behaviour {
	return []behaviour{
		{"generation/config-map-has-none", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "no-gen", nil, map[string]string{"k": "1"}))
			set(t, created, "2", "data", "k")
			updated := e.update(t, ConfigMapGVR, created)
			require.Zero(t, created.GetGeneration(), "ConfigMaps have no generation")
			require.Zero(t, updated.GetGeneration(), "ConfigMaps have no generation")
		}},
		{"generation/deployment-bumps-on-spec-and-annotations-only", func(t *testing.T, e *env) {
			d := e.create(t, DeploymentGVR, deployment(e.ns, "gen", 1))
			require.EqualValues(t, 1, d.GetGeneration(), "create")

			d.SetLabels(map[string]string{"team": "a"})
			d = e.update(t, DeploymentGVR, d)
			require.EqualValues(t, 1, d.GetGeneration(), "a label change does not bump")

			set(t, d, int64(2), "spec", "replicas")
			d = e.update(t, DeploymentGVR, d)
			require.EqualValues(t, 2, d.GetGeneration(), "a spec change bumps")

			// The Deployment rule: annotations are copied to ReplicaSets, so they bump too.
			d.SetAnnotations(map[string]string{"note": "x"})
			d = e.update(t, DeploymentGVR, d)
			require.EqualValues(t, 3, d.GetGeneration(), "an annotation change bumps a Deployment")

			set(t, d, int64(7), "status", "observedGeneration")
			d, err := e.c.UpdateStatus(e.ctx, DeploymentGVR, d)
			require.NoError(t, err)
			require.EqualValues(t, 3, d.GetGeneration(), "a status update does not bump")
		}},
		{"generation/custom-resource-bumps-on-spec-only", func(t *testing.T, e *env) {
			c := e.create(t, ClusterGVR, cluster(e.name("gen")))
			require.EqualValues(t, 1, c.GetGeneration(), "create")

			c.SetLabels(map[string]string{"tier": "prod"})
			c.SetAnnotations(map[string]string{"note": "x"})
			c.SetGeneration(99)
			c = e.update(t, ClusterGVR, c)
			require.EqualValues(t, 1, c.GetGeneration(), "metadata changes do not bump a custom resource, and clients cannot set it")

			set(t, c, "us-east-1", "spec", "region")
			c = e.update(t, ClusterGVR, c)
			require.EqualValues(t, 2, c.GetGeneration(), "a spec change bumps")

			set(t, c, "v1.37.2", "status", "kubernetesVersion")
			c, err := e.c.UpdateStatus(e.ctx, ClusterGVR, c)
			require.NoError(t, err)
			require.EqualValues(t, 2, c.GetGeneration(), "a status update does not bump")
		}},
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
			d, err := e.c.UpdateStatus(e.ctx, DeploymentGVR, d)
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
		{"finalizers/update-cannot-set-deletion-timestamp", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "no-dts", nil, nil))
			now := metav1.Now()
			created.SetDeletionTimestamp(&now)
			_, err := e.c.Update(e.ctx, ConfigMapGVR, created)
			require.True(t, apierrors.IsInvalid(err), "deletionTimestamp is set by Delete only (immutable to Update); got %v", err)
			require.Nil(t, e.get(t, ConfigMapGVR, e.ns, "no-dts").GetDeletionTimestamp())
		}},
	}
}
