package conformance

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// patchBehaviours: merge patch, JSON patch and strategic merge patch.
func patchBehaviours() []behaviour {
	return []behaviour{
		{"patch/merge-sets-and-removes", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "merge", map[string]string{"a": "1", "b": "2"}, map[string]string{"x": "1", "y": "2"}))
			patched, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "merge", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"a":null,"c":"3"}},"data":{"x":"10"}}`))
			require.NoError(t, err)
			require.NotEqual(t, created.GetResourceVersion(), patched.GetResourceVersion())
			if diff := cmp.Diff(map[string]string{"b": "2", "c": "3"}, patched.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			data, _, _ := unstructured.NestedStringMap(e.get(t, ConfigMapGVR, e.ns, "merge").Object, "data")
			if diff := cmp.Diff(map[string]string{"x": "10", "y": "2"}, data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		}},
		{"patch/merge-with-stale-resource-version-conflicts", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "merge-rv", nil, map[string]string{"k": "1"}))
			set(t, created, "2", "data", "k")
			e.update(t, ConfigMapGVR, created.DeepCopy())
			patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"k":"3"}}`, created.GetResourceVersion())
			_, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "merge-rv", types.MergePatchType, []byte(patch))
			require.True(t, apierrors.IsConflict(err), "want Conflict, got %v", err)
		}},
		{"patch/merge-replaces-lists", func(t *testing.T, e *env) {
			e.create(t, DeploymentGVR, deployment(e.ns, "merge-list", 1))
			patched, err := e.c.Patch(e.ctx, DeploymentGVR, e.ns, "merge-list", types.MergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"other","image":"registry.example/other:1"}]}}}}`))
			require.NoError(t, err)
			containers, _, _ := unstructured.NestedSlice(patched.Object, "spec", "template", "spec", "containers")
			require.Len(t, containers, 1, "a merge patch replaces a list whole")
			require.Equal(t, "other", containers[0].(map[string]any)["name"])
		}},
		{"patch/json-add-replace-remove", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "json", map[string]string{"old": "1"}, map[string]string{"x": "1"}))
			patched, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "json", types.JSONPatchType, []byte(`[
				{"op":"add","path":"/metadata/labels/new","value":"2"},
				{"op":"remove","path":"/metadata/labels/old"},
				{"op":"replace","path":"/data/x","value":"10"},
				{"op":"test","path":"/data/x","value":"10"}
			]`))
			require.NoError(t, err)
			require.Equal(t, map[string]string{"new": "2"}, patched.GetLabels())
			require.Equal(t, "10", str(patched, "data", "x"))
		}},
		{"patch/json-failed-test-changes-nothing", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "json-test", nil, map[string]string{"x": "1"}))
			_, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "json-test", types.JSONPatchType, []byte(`[
				{"op":"replace","path":"/data/x","value":"2"},
				{"op":"test","path":"/data/x","value":"1"}
			]`))
			require.Error(t, err)
			require.True(t, apierrors.IsInvalid(err), "a failed test op is Invalid (422); got %v", err)
			got := e.get(t, ConfigMapGVR, e.ns, "json-test")
			require.Equal(t, created.GetResourceVersion(), got.GetResourceVersion())
			require.Equal(t, "1", str(got, "data", "x"))
		}},
		{"patch/json-bad-path-is-rejected", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "json-path", nil, nil))
			_, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "json-path", types.JSONPatchType,
				[]byte(`[{"op":"replace","path":"/data/absent","value":"2"}]`))
			require.Error(t, err)
			require.False(t, apierrors.IsNotFound(err), "the object exists; the path does not: %v", err)
		}},
		{"patch/not-found", func(t *testing.T, e *env) {
			_, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "absent", types.MergePatchType, []byte(`{"data":{"k":"v"}}`))
			require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)
		}},
		{"patch/no-op-keeps-resource-version", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "patch-noop", nil, map[string]string{"k": "v"}))
			patched, err := e.c.Patch(e.ctx, ConfigMapGVR, e.ns, "patch-noop", types.MergePatchType, []byte(`{"data":{"k":"v"}}`))
			require.NoError(t, err)
			require.Equal(t, created.GetResourceVersion(), patched.GetResourceVersion())
		}},
		{"patch/spec-patch-bumps-generation", func(t *testing.T, e *env) {
			e.create(t, DeploymentGVR, deployment(e.ns, "patch-gen", 1))
			patched, err := e.c.Patch(e.ctx, DeploymentGVR, e.ns, "patch-gen", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`))
			require.NoError(t, err)
			require.EqualValues(t, 2, patched.GetGeneration())
			require.EqualValues(t, 4, num(patched, "spec", "replicas"))
		}},
		{"patch/strategic-merge-merges-lists-by-key", func(t *testing.T, e *env) {
			e.create(t, DeploymentGVR, deployment(e.ns, "smp", 1))
			patched, err := e.c.Patch(e.ctx, DeploymentGVR, e.ns, "smp", types.StrategicMergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"registry.example/sidecar:1"}]}}}}`))
			require.NoError(t, err)
			containers, _, _ := unstructured.NestedSlice(patched.Object, "spec", "template", "spec", "containers")
			var names []string
			for _, c := range containers {
				names = append(names, c.(map[string]any)["name"].(string))
			}
			require.ElementsMatch(t, []string{"main", "sidecar"}, names, "containers merge by name")
		}},
		{"patch/strategic-merge-unsupported-for-custom-resources", func(t *testing.T, e *env) {
			c := e.create(t, ClusterGVR, cluster(e.name("smp")))
			_, err := e.c.Patch(e.ctx, ClusterGVR, "", c.GetName(), types.StrategicMergePatchType, []byte(`{"spec":{"region":"x"}}`))
			require.Error(t, err)
			var status apierrors.APIStatus
			require.ErrorAs(t, err, &status)
			require.EqualValues(t, http.StatusUnsupportedMediaType, status.Status().Code, "got %v", err)
		}},
	}
}
