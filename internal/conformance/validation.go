package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// validationBehaviours: the metadata rules every write goes through (names, labels,
// annotations, ownerReferences) and the metadata an update cannot change. A controller sees
// each as a 422 Invalid naming the field, or as a value the server keeps.
func validationBehaviours() []behaviour {
	return []behaviour{
		{"create/invalid-name-is-invalid", func(t *testing.T, e *env) {
			_, err := e.c.Create(e.ctx, ConfigMapGVR, configMap(e.ns, "Not_A_DNS_Name", nil, nil))
			require.Equal(t, []string{"metadata.name"}, invalidFields(t, err), "ConfigMap names are DNS subdomains")
			_, err = e.c.Get(e.ctx, ConfigMapGVR, e.ns, "Not_A_DNS_Name")
			require.True(t, apierrors.IsNotFound(err), "nothing is stored: %v", err)
		}},
		{"create/namespace-name-is-a-dns-label", func(t *testing.T, e *env) {
			ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
			ns.SetName("dotted.name-" + e.run)
			_, err := e.c.Create(e.ctx, NamespaceGVR, ns)
			require.Equal(t, []string{"metadata.name"}, invalidFields(t, err), "a DNS subdomain is not enough for a Namespace")
		}},
		{"create/custom-resource-name-is-a-dns-subdomain", func(t *testing.T, e *env) {
			e.create(t, ClusterGVR, cluster(e.name("dotted.name")))
			_, err := e.c.Create(e.ctx, ClusterGVR, cluster(e.name("Upper")))
			require.Equal(t, []string{"metadata.name"}, invalidFields(t, err))
		}},
		{"create/invalid-generate-name-is-invalid", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "", nil, nil)
			obj.SetGenerateName("Bad_")
			_, err := e.c.Create(e.ctx, ConfigMapGVR, obj)
			require.Contains(t, invalidFields(t, err), "metadata.generateName")
		}},
		{"metadata/invalid-labels-are-invalid", func(t *testing.T, e *env) {
			_, err := e.c.Create(e.ctx, ConfigMapGVR, configMap(e.ns, "bad-label", map[string]string{"k": "has space"}, nil))
			require.Equal(t, []string{"metadata.labels"}, invalidFields(t, err), "label value")

			created := e.create(t, ConfigMapGVR, configMap(e.ns, "bad-label", nil, nil))
			changed := created.DeepCopy()
			changed.SetLabels(map[string]string{"bad key": "v"})
			_, err = e.c.Update(e.ctx, ConfigMapGVR, changed)
			require.Equal(t, []string{"metadata.labels"}, invalidFields(t, err), "label key")

			_, err = e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "bad-label", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"k":"`+strings.Repeat("v", 64)+`"}}}`))
			require.Equal(t, []string{"metadata.labels"}, invalidFields(t, err), "a label value over 63 characters")
			require.Equal(t, created.GetResourceVersion(), e.get(t, ConfigMapGVR, e.ns, "bad-label").GetResourceVersion())
		}},
		{"metadata/annotations-over-256KiB-are-invalid", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "big-annotations", nil, nil)
			obj.SetAnnotations(map[string]string{"big": strings.Repeat("x", 256<<10)})
			_, err := e.c.Create(e.ctx, ConfigMapGVR, obj)
			require.Equal(t, []string{"metadata.annotations"}, invalidFields(t, err))

			obj.SetAnnotations(map[string]string{"a/b/c": "v"})
			_, err = e.c.Create(e.ctx, ConfigMapGVR, obj)
			require.Equal(t, []string{"metadata.annotations"}, invalidFields(t, err), "an annotation key is a qualified name")
		}},
		{"metadata/owner-reference-needs-uid", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "owned", nil, nil)
			obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner"}})
			_, err := e.c.Create(e.ctx, ConfigMapGVR, obj)
			require.Contains(t, invalidFields(t, err), "metadata.ownerReferences[0].uid")
		}},
		{"update/empty-uid-and-changed-creation-timestamp-are-kept", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "keeps-uid", nil, nil))
			changed := created.DeepCopy()
			changed.SetUID("")
			changed.SetCreationTimestamp(metav1.Unix(0, 0))
			changed.SetLabels(map[string]string{"touched": "yes"})
			updated := e.update(t, ConfigMapGVR, changed)
			require.Equal(t, created.GetUID(), updated.GetUID(), "an empty uid is the stored one")
			require.Equal(t, created.GetCreationTimestamp(), updated.GetCreationTimestamp())
		}},
		{"finalizers/update-cannot-set-deletion-timestamp", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "no-dts", nil, nil))
			now := metav1.Now()
			created.SetDeletionTimestamp(&now)
			_, err := e.c.Update(e.ctx, ConfigMapGVR, created)
			require.Equal(t, []string{"metadata.deletionTimestamp"}, invalidFields(t, err),
				"deletionTimestamp is set by Delete only (immutable to Update)")
			require.Nil(t, e.get(t, ConfigMapGVR, e.ns, "no-dts").GetDeletionTimestamp())
		}},
		{"finalizers/update-cannot-set-deletion-grace-period", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "no-grace", nil, nil))
			grace := int64(30)
			created.SetDeletionGracePeriodSeconds(&grace)
			_, err := e.c.Update(e.ctx, ConfigMapGVR, created)
			require.Equal(t, []string{"metadata.deletionGracePeriodSeconds"}, invalidFields(t, err))
		}},
		{"finalizers/update-cannot-move-deletion-timestamp", func(t *testing.T, e *env) {
			obj := configMap(e.ns, "dts-kept", nil, nil)
			obj.SetFinalizers([]string{holdFinalizer})
			e.create(t, ConfigMapGVR, obj)
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "dts-kept", metav1.DeleteOptions{}))
			deleting := e.get(t, ConfigMapGVR, e.ns, "dts-kept")

			moved := deleting.DeepCopy()
			later := metav1.NewTime(deleting.GetDeletionTimestamp().Add(3600e9))
			moved.SetDeletionTimestamp(&later)
			moved.SetLabels(map[string]string{"moved": "tried"})
			updated := e.update(t, ConfigMapGVR, moved)
			require.Equal(t, deleting.GetDeletionTimestamp(), updated.GetDeletionTimestamp(),
				"once set, deletionTimestamp is the server's; the update is not refused for it")
			require.Equal(t, "tried", updated.GetLabels()["moved"])

			updated.SetDeletionTimestamp(nil)
			updated.SetFinalizers(nil)
			_, err := e.c.Update(e.ctx, ConfigMapGVR, updated)
			require.NoError(t, err, "removing the last finalizer deletes the object")
		}},
		{"patch/name-and-namespace-are-immutable", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "pinned", nil, nil))
			_, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "pinned", types.MergePatchType, []byte(`{"metadata":{"name":"renamed"}}`))
			require.True(t, apierrors.IsBadRequest(err), "renaming: want BadRequest, got %v", err)
			_, err = e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "pinned", types.MergePatchType, []byte(`{"metadata":{"namespace":"elsewhere"}}`))
			require.True(t, apierrors.IsBadRequest(err), "moving: want BadRequest, got %v", err)

			patched, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "pinned", types.JSONPatchType,
				[]byte(`[{"op":"remove","path":"/metadata/namespace"},{"op":"add","path":"/data","value":{"k":"v"}}]`))
			require.NoError(t, err, "a namespace the patch removes is the request's")
			require.Equal(t, e.ns, patched.GetNamespace())
		}},
	}
}
