package fake_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// invalidFields returns the fields an Invalid error names, failing the test for any other
// error.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	require.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
	var fields []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	return fields
}

func TestCreateValidatesNames(t *testing.T) {
	roleGVR := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	stsGVR := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	tests := []struct {
		name  string
		gvr   schema.GroupVersionResource
		obj   *unstructured.Unstructured
		valid bool
	}{
		{"configmap subdomain", configMapGVR, configMap("prod", "a.b-c", nil), true},
		{"configmap upper case", configMapGVR, configMap("prod", "Not_A_DNS_Name", nil), false},
		{"configmap too long", configMapGVR, configMap("prod", strings.Repeat("a", 254), nil), false},
		{"namespace label", namespaceGVR, namespace("team-a"), true},
		{"namespace with a dot", namespaceGVR, namespace("team.a"), false},
		{"service with a dot", serviceGVR, service("prod", "web.v1", "ClusterIP"), false},
		{"service starting with a digit", serviceGVR, service("prod", "1web", "ClusterIP"), true},
		{"statefulset with a dot", stsGVR, typed("apps/v1", "StatefulSet", "prod", "db.v1", map[string]any{"serviceName": "db"}), false},
		{"role path segment", roleGVR, typed("rbac.authorization.k8s.io/v1", "Role", "prod", "system:Reader", nil), true},
		{"role with a slash", roleGVR, typed("rbac.authorization.k8s.io/v1", "Role", "prod", "a/b", nil), false},
		{"custom resource subdomain", widgetGVR, widget("prod", "w.1", 1), true},
		{"custom resource upper case", widgetGVR, widget("prod", "Widget", 1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			_, err := c.Create(testCtx(t), tc.gvr, tc.obj)
			if tc.valid {
				require.NoError(t, err)
				return
			}
			fields := invalidFields(t, err)
			require.NotEmpty(t, fields)
			require.Contains(t, []string{"metadata.name", "metadata.namespace"}, fields[0])
			_, err = c.Peek(tc.gvr, tc.obj.GetNamespace(), tc.obj.GetName())
			require.True(t, apierrors.IsNotFound(err), "nothing is stored: %v", err)
		})
	}

	// An invalid namespace cannot exist: admission, which comes first, answers NotFound.
	_, err := newCluster(t, "c").Create(testCtx(t), configMapGVR, configMap("Prod", "cfg", nil))
	require.True(t, apierrors.IsNotFound(err), "Create in namespace Prod = %v", err)
}

func TestCreateValidatesGenerateName(t *testing.T) {
	c := newCluster(t, "c")
	obj := configMap("prod", "", nil)
	obj.SetGenerateName("Bad_")
	_, err := c.Create(testCtx(t), configMapGVR, obj)
	require.Contains(t, invalidFields(t, err), "metadata.generateName")
}

func TestValidatesLabelsAnnotationsAndOwners(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(u *unstructured.Unstructured)
		wantField string
	}{
		{"label key", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"bad key": "v"}) }, "metadata.labels"},
		{"label value", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"k": "has space"}) }, "metadata.labels"},
		{"label value too long", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"k": strings.Repeat("v", 64)}) }, "metadata.labels"},
		{"annotation key", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a/b/c": "v"}) }, "metadata.annotations"},
		{"annotations over 256KiB", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"big": strings.Repeat("x", 256<<10)})
		}, "metadata.annotations"},
		{"owner without uid", func(u *unstructured.Unstructured) {
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner"}})
		}, "metadata.ownerReferences[0].uid"},
		{"finalizer name", func(u *unstructured.Unstructured) { u.SetFinalizers([]string{"a/b/c"}) }, "metadata.finalizers"},
	}
	for _, tc := range tests {
		t.Run("create/"+tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			obj := configMap("prod", "cfg", nil)
			tc.mutate(obj)
			_, err := c.Create(testCtx(t), configMapGVR, obj)
			require.Contains(t, invalidFields(t, err), tc.wantField)
		})
		t.Run("update/"+tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			created := mustCreate(t, c, configMapGVR, configMap("prod", "cfg", map[string]any{"k": "v"}))
			obj := created.DeepCopy()
			tc.mutate(obj)
			_, err := c.Update(testCtx(t), configMapGVR, obj)
			require.Contains(t, invalidFields(t, err), tc.wantField)
			got, err := c.Peek(configMapGVR, "prod", "cfg")
			require.NoError(t, err)
			require.Equal(t, created.GetResourceVersion(), got.GetResourceVersion(), "nothing is written")
		})
		t.Run("drift/"+tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			mustCreate(t, c, configMapGVR, configMap("prod", "cfg", nil))
			err := c.Drift(configMapGVR, "prod", "cfg", tc.mutate)
			require.Contains(t, invalidFields(t, err), tc.wantField, "other actors go through the same validation")
		})
	}
}

func TestSeedSkipsValidation(t *testing.T) {
	c := newCluster(t, "c")
	obj := configMap("prod", "Legacy_Name", nil)
	require.NoError(t, c.Seed(obj), "storage holds what older rules let in")
}

func TestUnconditionalUpdate(t *testing.T) {
	tests := []struct {
		name    string
		gvr     schema.GroupVersionResource
		obj     *unstructured.Unstructured
		allowed bool
	}{
		{"configmap", configMapGVR, configMap("prod", "cfg", nil), true},
		{"deployment", deployGVR, deployment("prod", "web", 1), true},
		{"custom resource", widgetGVR, widget("prod", "w", 1), false},
		{"lease", leaseGVR, typed("coordination.k8s.io/v1", "Lease", "prod", "leader", map[string]any{}), false},
		{"poddisruptionbudget", schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
			typed("policy/v1", "PodDisruptionBudget", "prod", "pdb", map[string]any{}), false},
		{"priorityclass", priorityClassGVR, priorityClass("high", 1000), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			created := mustCreate(t, c, tc.gvr, tc.obj)
			created.SetResourceVersion("")
			created.SetLabels(map[string]string{"changed": "yes"})
			_, err := c.Update(testCtx(t), tc.gvr, created)
			if tc.allowed {
				require.NoError(t, err)
				return
			}
			require.Equal(t, []string{"metadata.resourceVersion"}, invalidFields(t, err))
			require.Contains(t, err.Error(), "must be specified for an update")
		})
	}
}

func TestUnconditionalUpdateStatusAndOverride(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	created := mustCreate(t, c, widgetGVR, widget("prod", "w", 1))
	created.SetResourceVersion("")
	created.Object["status"] = map[string]any{"ok": true}
	_, err := c.UpdateStatus(ctx, widgetGVR, created)
	require.Equal(t, []string{"metadata.resourceVersion"}, invalidFields(t, err), "UpdateStatus has the same rule")

	c.SetUnconditionalUpdate(widgetGVR.GroupResource(), true)
	_, err = c.UpdateStatus(ctx, widgetGVR, created)
	require.NoError(t, err)

	// Patches carry the stored resourceVersion unless they remove it.
	_, err = c.Patch(ctx, widgetGVR, "prod", "w", types.MergePatchType, []byte(`{"spec":{"size":2}}`))
	require.NoError(t, err)
	c.SetUnconditionalUpdate(widgetGVR.GroupResource(), false)
	_, err = c.Patch(ctx, widgetGVR, "prod", "w", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":null},"spec":{"size":3}}`))
	require.Equal(t, []string{"metadata.resourceVersion"}, invalidFields(t, err))
}

func TestUpdateImmutableMetadata(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	created := mustCreate(t, c, configMapGVR, configMap("prod", "cfg", nil))

	withDTS := created.DeepCopy()
	now := metav1.Now()
	withDTS.SetDeletionTimestamp(&now)
	_, err := c.Update(ctx, configMapGVR, withDTS)
	require.Equal(t, []string{"metadata.deletionTimestamp"}, invalidFields(t, err))

	withGrace := created.DeepCopy()
	grace := int64(30)
	withGrace.SetDeletionGracePeriodSeconds(&grace)
	_, err = c.Update(ctx, configMapGVR, withGrace)
	require.Equal(t, []string{"metadata.deletionGracePeriodSeconds"}, invalidFields(t, err))

	// uid left empty and a changed creationTimestamp are taken from the stored object.
	reset := created.DeepCopy()
	reset.SetUID("")
	reset.SetCreationTimestamp(metav1.Unix(0, 0))
	reset.SetLabels(map[string]string{"k": "v"})
	got, err := c.Update(ctx, configMapGVR, reset)
	require.NoError(t, err)
	require.Equal(t, created.GetUID(), got.GetUID())
	require.Equal(t, created.GetCreationTimestamp(), got.GetCreationTimestamp())
}

func TestUpdateKeepsDeletionTimestampWhileDeleting(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	obj := configMap("prod", "cfg", nil)
	obj.SetFinalizers([]string{"example.com/hold"})
	mustCreate(t, c, configMapGVR, obj)
	require.NoError(t, c.Delete(ctx, configMapGVR, "prod", "cfg", noDeleteOptions))
	deleting, err := c.Get(ctx, configMapGVR, "prod", "cfg")
	require.NoError(t, err)

	moved := deleting.DeepCopy()
	later := metav1.NewTime(deleting.GetDeletionTimestamp().Add(3600e9))
	moved.SetDeletionTimestamp(&later)
	moved.SetDeletionGracePeriodSeconds(nil)
	moved.SetLabels(map[string]string{"k": "v"})
	got, err := c.Update(ctx, configMapGVR, moved)
	require.NoError(t, err, "a set deletionTimestamp cannot move, and the update is not refused for trying")
	require.Equal(t, deleting.GetDeletionTimestamp(), got.GetDeletionTimestamp())
	require.Equal(t, deleting.GetDeletionGracePeriodSeconds(), got.GetDeletionGracePeriodSeconds())
	require.Equal(t, "v", got.GetLabels()["k"])
}

func TestPatchNameAndNamespace(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	mustCreate(t, c, configMapGVR, configMap("prod", "cfg", nil))
	mustCreate(t, c, namespaceGVR, namespace("team"))

	_, err := c.Patch(ctx, configMapGVR, "prod", "cfg", types.MergePatchType, []byte(`{"metadata":{"name":"other"}}`))
	require.True(t, apierrors.IsBadRequest(err), "renaming = %v", err)
	_, err = c.Patch(ctx, configMapGVR, "prod", "cfg", types.MergePatchType, []byte(`{"metadata":{"namespace":"dev"}}`))
	require.True(t, apierrors.IsBadRequest(err), "moving = %v", err)

	got, err := c.Patch(ctx, configMapGVR, "prod", "cfg", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/namespace"}]`))
	require.NoError(t, err, "a removed namespace is the request's")
	require.Equal(t, "prod", got.GetNamespace())

	got, err = c.Patch(ctx, namespaceGVR, "", "team", types.MergePatchType, []byte(`{"metadata":{"namespace":"x","labels":{"a":"b"}}}`))
	require.NoError(t, err, "a namespace on a cluster-scoped object is dropped")
	require.Empty(t, got.GetNamespace())
}

func TestDaemonSetTemplateGeneration(t *testing.T) {
	const key = "deprecated.daemonset.template.generation"
	c := newCluster(t, "c")
	ctx := testCtx(t)
	ds := mustCreate(t, c, daemonSetGVR, daemonSet("prod", "agent"))
	require.Equal(t, "1", ds.GetAnnotations()[key], "create sets it")

	ds.SetAnnotations(map[string]string{key: "7", "other": "x"})
	ds, err := c.Update(ctx, daemonSetGVR, ds)
	require.NoError(t, err)
	require.Equal(t, "1", ds.GetAnnotations()[key], "clients cannot set it")
	require.EqualValues(t, 1, ds.GetGeneration())

	ds.SetAnnotations(nil)
	same, err := c.Update(ctx, daemonSetGVR, ds)
	require.NoError(t, err)
	require.Equal(t, "1", same.GetAnnotations()[key], "nor remove it")

	require.NoError(t, unstructured.SetNestedField(same.Object, int64(5), "spec", "minReadySeconds"))
	ds, err = c.Update(ctx, daemonSetGVR, same)
	require.NoError(t, err)
	require.Equal(t, "1", ds.GetAnnotations()[key], "a spec change outside the template")
	require.EqualValues(t, 2, ds.GetGeneration())

	containers, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "nginx:1.28"
	require.NoError(t, unstructured.SetNestedSlice(ds.Object, containers, "spec", "template", "spec", "containers"))
	ds, err = c.Update(ctx, daemonSetGVR, ds)
	require.NoError(t, err)
	require.Equal(t, "2", ds.GetAnnotations()[key], "a template change bumps it")
	require.EqualValues(t, 3, ds.GetGeneration())

	bad := daemonSet("prod", "bad")
	bad.SetAnnotations(map[string]string{key: "one"})
	_, err = c.Create(ctx, daemonSetGVR, bad)
	require.True(t, apierrors.IsBadRequest(err), "not a number = %v", err)
}
