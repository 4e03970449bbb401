package fake_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestPatch(t *testing.T) {
	tests := []struct {
		name  string
		gvr   schema.GroupVersionResource
		obj   *unstructured.Unstructured
		pt    types.PatchType
		patch string
		check func(t *testing.T, got *unstructured.Unstructured)
	}{
		{
			name:  "JSON patch",
			gvr:   deployGVR,
			obj:   deployment("prod", "web", 1),
			pt:    types.JSONPatchType,
			patch: `[{"op":"test","path":"/spec/replicas","value":1},{"op":"replace","path":"/spec/replicas","value":4}]`,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				require.Equal(t, int64(4), nested(t, got, "spec", "replicas"))
				require.Equal(t, int64(2), got.GetGeneration())
			},
		},
		{
			name:  "merge patch",
			gvr:   widgetGVR,
			obj:   widget("prod", "w", 1),
			pt:    types.MergePatchType,
			patch: `{"metadata":{"labels":{"x":"y"}},"spec":{"size":null,"color":"red"}}`,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				require.Equal(t, map[string]any{"color": "red"}, got.Object["spec"])
				require.Equal(t, map[string]string{"x": "y"}, got.GetLabels())
				require.Equal(t, int64(2), got.GetGeneration())
			},
		},
		{
			name:  "strategic merge patch merges containers by name",
			gvr:   deployGVR,
			obj:   deployment("prod", "web", 1),
			pt:    types.StrategicMergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"envoy:1"}]}}}}`,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				containers := nested(t, got, "spec", "template", "spec", "containers").([]any)
				var names []string
				for _, c := range containers {
					names = append(names, c.(map[string]any)["name"].(string))
				}
				if diff := cmp.Diff([]string{"sidecar", "app"}, names); diff != "" {
					t.Errorf("containers (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:  "merge patch replaces lists",
			gvr:   deployGVR,
			obj:   deployment("prod", "web", 1),
			pt:    types.MergePatchType,
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"envoy:1"}]}}}}`,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				require.Len(t, nested(t, got, "spec", "template", "spec", "containers"), 1)
			},
		},
		{
			name:  "status in a main-resource patch is ignored",
			gvr:   deployGVR,
			obj:   deployment("prod", "web", 1),
			pt:    types.MergePatchType,
			patch: `{"status":{"readyReplicas":7}}`,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				require.NotContains(t, got.Object, "status")
				require.Equal(t, rv(1), got.GetResourceVersion(), "a patch changing nothing writes nothing")
			},
		},
		{
			name:  "resourceVersion in the patch is a precondition that can pass",
			gvr:   configMapGVR,
			obj:   configMap("prod", "cfg", nil),
			pt:    types.MergePatchType,
			patch: `{"metadata":{"resourceVersion":"` + rv(1) + `"},"data":{"k":"v"}}`,
			check: func(t *testing.T, got *unstructured.Unstructured) {
				require.Equal(t, rv(2), got.GetResourceVersion())
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			created := mustCreate(t, c, tc.gvr, tc.obj)
			got, err := c.Patch(testCtx(t), tc.gvr, created.GetNamespace(), created.GetName(), tc.pt, []byte(tc.patch))
			require.NoError(t, err)
			tc.check(t, got)
			stored, err := c.Peek(tc.gvr, created.GetNamespace(), created.GetName())
			require.NoError(t, err)
			if diff := cmp.Diff(stored.Object, got.Object); diff != "" {
				t.Errorf("returned object differs from stored (-stored +returned):\n%s", diff)
			}
		})
	}
}

func TestPatchErrors(t *testing.T) {
	tests := []struct {
		name  string
		gvr   schema.GroupVersionResource
		obj   string // "" = the object does not exist
		pt    types.PatchType
		patch string
		is    func(error) bool
	}{
		{"missing object", deployGVR, "", types.MergePatchType, `{}`, apierrors.IsNotFound},
		{"invalid JSON", deployGVR, "web", types.MergePatchType, `{`, apierrors.IsBadRequest},
		{"JSON patch not a list", deployGVR, "web", types.JSONPatchType, `{"op":"add"}`, apierrors.IsBadRequest},
		{"JSON patch test fails", deployGVR, "web", types.JSONPatchType, `[{"op":"test","path":"/spec/replicas","value":9}]`, isUnprocessable},
		{"JSON patch path missing", deployGVR, "web", types.JSONPatchType, `[{"op":"replace","path":"/spec/nope/x","value":1}]`, isUnprocessable},
		{"strategic merge patch on a custom resource", widgetGVR, "w", types.StrategicMergePatchType, `{"spec":{"size":2}}`, apierrors.IsUnsupportedMediaType},
		{"server-side apply", deployGVR, "web", types.ApplyYAMLPatchType, `spec: {replicas: 2}`, apierrors.IsUnsupportedMediaType},
		{"unknown patch type", deployGVR, "web", types.PatchType("application/x-nope"), `{}`, apierrors.IsUnsupportedMediaType},
		{"strategic merge patch with an unknown directive", deployGVR, "web", types.StrategicMergePatchType, `{"$patch":"bogus"}`, apierrors.IsBadRequest},
		{"strategic merge patch of the wrong shape", deployGVR, "web", types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"x"}],"containers":[{"name":"y"}]}}}}`, apierrors.IsBadRequest},
		{"result does not decode into the built-in type", deployGVR, "web", types.MergePatchType, `{"spec":{"replicas":"three"}}`, apierrors.IsBadRequest},
		{"stale resourceVersion", deployGVR, "web", types.MergePatchType, `{"metadata":{"resourceVersion":"99"}}`, apierrors.IsConflict},
		{"renaming", deployGVR, "web", types.MergePatchType, `{"metadata":{"name":"other"}}`, apierrors.IsBadRequest},
		{"moving namespace", deployGVR, "web", types.MergePatchType, `{"metadata":{"namespace":"other"}}`, apierrors.IsBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			name := "web"
			switch {
			case tc.obj == "":
			case tc.gvr == widgetGVR:
				name = tc.obj
				mustCreate(t, c, widgetGVR, widget("prod", tc.obj, 1))
			default:
				mustCreate(t, c, deployGVR, deployment("prod", tc.obj, 1))
			}
			_, err := c.Patch(testCtx(t), tc.gvr, "prod", name, tc.pt, []byte(tc.patch))
			require.Error(t, err)
			require.True(t, tc.is(err), "Patch = %v", err)
		})
	}
}

func isUnprocessable(err error) bool {
	status, ok := err.(apierrors.APIStatus)
	return ok && status.Status().Code == 422
}
