package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// crudBehaviours: create, get, update and delete, with the errors a loop branches on.
func crudBehaviours() []behaviour {
	return []behaviour{
		{"create/returns-stored-object", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "created", nil, map[string]string{"k": "v"}))
			require.NotEmpty(t, created.GetUID(), "uid")
			require.NotEmpty(t, created.GetResourceVersion(), "resourceVersion")
			ts := created.GetCreationTimestamp()
			require.False(t, ts.IsZero(), "creationTimestamp")
			require.Equal(t, "v", str(created, "data", "k"))
			got := e.get(t, ConfigMapGVR, e.ns, "created")
			require.Equal(t, created.GetResourceVersion(), got.GetResourceVersion())
			require.Equal(t, created.GetUID(), got.GetUID())
			require.Equal(t, "v", str(got, "data", "k"))
		}},
		{"create/generate-name", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "", nil, nil)
			obj.SetGenerateName("gen-")
			created := e.create(t, ConfigMapGVR, obj)
			require.Regexp(t, `^gen-[a-z0-9]{5}$`, created.GetName())
		}},
		{"create/already-exists", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "twice", nil, nil))
			_, err := e.c.Create(e.ctx, ConfigMapGVR, configMap(e.ns, "twice", nil, nil))
			require.True(t, apierrors.IsAlreadyExists(err), "want AlreadyExists, got %v", err)
		}},
		{"create/resource-version-set-is-rejected", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "with-rv", nil, nil)
			obj.SetResourceVersion("12345")
			_, err := e.c.Create(e.ctx, ConfigMapGVR, obj)
			require.Error(t, err)
			_, err = e.c.Get(e.ctx, ConfigMapGVR, e.ns, "with-rv")
			require.True(t, apierrors.IsNotFound(err), "the object must not exist: %v", err)
		}},
		{"create/same-name-other-namespace-or-kind", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "shared", nil, nil))
			e.create(t, DeploymentGVR, deployment(e.ns, "shared", 1))
		}},
		{"get/not-found", func(t *testing.T, e *env) {
			_, err := e.c.Get(e.ctx, ConfigMapGVR, e.ns, "absent")
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
		{"get/other-namespace-is-not-found", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "here", nil, nil))
			_, err := e.c.Get(e.ctx, ConfigMapGVR, e.ns+"-elsewhere", "here")
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
		{"update/bumps-resource-version", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "upd", nil, map[string]string{"k": "1"}))
			set(t, created, "2", "data", "k")
			updated := e.update(t, ConfigMapGVR, created)
			require.NotEqual(t, created.GetResourceVersion(), updated.GetResourceVersion())
			require.Equal(t, "2", str(e.get(t, ConfigMapGVR, e.ns, "upd"), "data", "k"))
		}},
		{"update/stale-resource-version-conflicts", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "stale", nil, map[string]string{"k": "1"}))
			fresh := created.DeepCopy()
			set(t, fresh, "2", "data", "k")
			e.update(t, ConfigMapGVR, fresh)
			set(t, created, "3", "data", "k")
			_, err := e.c.Update(e.ctx, ConfigMapGVR, created)
			require.True(t, apierrors.IsConflict(err), "want Conflict, got %v", err)
			require.Equal(t, "2", str(e.get(t, ConfigMapGVR, e.ns, "stale"), "data", "k"))
		}},
		{"update/no-op-keeps-resource-version", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "noop", nil, map[string]string{"k": "v"}))
			same := e.update(t, ConfigMapGVR, created.DeepCopy())
			require.Equal(t, created.GetResourceVersion(), same.GetResourceVersion(),
				"an update that changes nothing is not written, so watchers see no event")
		}},
		{"update/not-found", func(t *testing.T, e *env) {
			_, err := e.c.Update(e.ctx, ConfigMapGVR, configMap(e.ns, "never-created", nil, nil))
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
		{"update/changed-uid-conflicts", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "uid", nil, nil))
			changed := created.DeepCopy()
			changed.SetUID(types.UID("00000000-0000-0000-0000-000000000000"))
			_, err := e.c.Update(e.ctx, ConfigMapGVR, changed)
			require.True(t, apierrors.IsConflict(err), "a uid in the object is a precondition; want Conflict, got %v", err)
		}},
		{"update/system-fields-are-kept", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "system-fields", nil, nil))
			changed := created.DeepCopy()
			changed.SetCreationTimestamp(metav1.Unix(0, 0))
			changed.SetGeneration(5)
			changed.SetLabels(map[string]string{"touched": "yes"})
			updated := e.update(t, ConfigMapGVR, changed)
			require.Equal(t, created.GetCreationTimestamp(), updated.GetCreationTimestamp(), "creationTimestamp is the server's")
			require.Zero(t, updated.GetGeneration(), "generation is the server's")
			require.Equal(t, "yes", updated.GetLabels()["touched"])
		}},
		{"delete/removes-object", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "del", nil, nil))
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "del", metav1.DeleteOptions{}))
			_, err := e.c.Get(e.ctx, ConfigMapGVR, e.ns, "del")
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
			err = e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "del", metav1.DeleteOptions{})
			require.True(t, apierrors.IsNotFound(err), "deleting twice: want NotFound, got %v", err)
		}},
		{"delete/stale-resource-version-precondition-conflicts", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "precond-rv", nil, map[string]string{"k": "1"}))
			stale := created.GetResourceVersion()
			set(t, created, "2", "data", "k")
			e.update(t, ConfigMapGVR, created)
			err := e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "precond-rv", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
			require.True(t, apierrors.IsConflict(err), "want Conflict, got %v", err)
			e.get(t, ConfigMapGVR, e.ns, "precond-rv")
		}},
		{"delete/uid-precondition-conflicts", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "precond-uid", nil, nil))
			uid := types.UID("00000000-0000-0000-0000-000000000001")
			err := e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "precond-uid", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			require.True(t, apierrors.IsConflict(err), "want Conflict, got %v", err)
		}},
		{"delete/matching-preconditions-delete", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "precond-ok", nil, nil))
			uid, rv := created.GetUID(), created.GetResourceVersion()
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "precond-ok", metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
			}))
		}},
	}
}
