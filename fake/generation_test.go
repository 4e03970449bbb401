package fake_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestGenerationRules(t *testing.T) {
	tests := []struct {
		name     string
		gvr      schema.GroupVersionResource
		obj      *unstructured.Unstructured
		noStatus bool // declare the resource without a status subresource
		drift    bool // write with Drift (spec and status) instead of Update
		mutate   func(u *unstructured.Unstructured)
		want     int64 // generation after the write; 0 = the field is absent
	}{
		{
			name: "deployment spec change bumps",
			gvr:  deployGVR,
			obj:  deployment("prod", "web", 1),
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
			},
			want: 2,
		},
		{
			name:   "deployment label change does not bump",
			gvr:    deployGVR,
			obj:    deployment("prod", "web", 1),
			mutate: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"tier": "front"}) },
			want:   1,
		},
		{
			name:   "deployment annotation change bumps",
			gvr:    deployGVR,
			obj:    deployment("prod", "web", 1),
			mutate: func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) },
			want:   2,
		},
		{
			name:   "statefulset annotation change does not bump",
			gvr:    schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"},
			obj:    typed("apps/v1", "StatefulSet", "prod", "db", map[string]any{"serviceName": "db"}),
			mutate: func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) },
			want:   1,
		},
		{
			name:   "endpointslice label change bumps",
			gvr:    endpointSliceGVR,
			obj:    endpointSlice("prod", "web-abcde"),
			mutate: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) },
			want:   2,
		},
		{
			name:   "endpointslice annotation change does not bump",
			gvr:    endpointSliceGVR,
			obj:    endpointSlice("prod", "web-abcde"),
			mutate: func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) },
			want:   1,
		},
		{
			name:   "priorityclass change does not bump",
			gvr:    priorityClassGVR,
			obj:    priorityClass("high", 1000),
			mutate: func(u *unstructured.Unstructured) { u.Object["description"] = "changed" },
			want:   1,
		},
		{
			name: "csidriver has none until a spec change",
			gvr:  schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"},
			obj:  typed("storage.k8s.io/v1", "CSIDriver", "", "csi.example.com", map[string]any{"attachRequired": true}),
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, false, "spec", "attachRequired")
			},
			want: 1,
		},
		{
			name:  "deployment status change by another actor does not bump",
			gvr:   deployGVR,
			obj:   deployment("prod", "web", 1),
			drift: true,
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(1), "status", "readyReplicas")
			},
			want: 1,
		},
		{
			name: "custom resource spec change bumps",
			gvr:  widgetGVR,
			obj:  widget("prod", "w", 1),
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "size")
			},
			want: 2,
		},
		{
			name:   "custom resource top-level field other than spec bumps",
			gvr:    widgetGVR,
			obj:    widget("prod", "w", 1),
			mutate: func(u *unstructured.Unstructured) { u.Object["data"] = map[string]any{"x": "y"} },
			want:   2,
		},
		{
			name:   "custom resource label change does not bump",
			gvr:    widgetGVR,
			obj:    widget("prod", "w", 1),
			mutate: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"x": "y"}) },
			want:   1,
		},
		{
			name:   "custom resource status change with a status subresource does not bump",
			gvr:    widgetGVR,
			obj:    widget("prod", "w", 1),
			drift:  true,
			mutate: func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"ok": true} },
			want:   1,
		},
		{
			name:     "custom resource status change without a status subresource bumps",
			gvr:      widgetGVR,
			obj:      widget("prod", "w", 1),
			noStatus: true,
			mutate:   func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"ok": true} },
			want:     2,
		},
		{
			name:   "configmaps have no generation",
			gvr:    configMapGVR,
			obj:    configMap("prod", "cfg", map[string]any{"k": "v"}),
			mutate: func(u *unstructured.Unstructured) { u.Object["data"] = map[string]any{"k": "w"} },
			want:   0,
		},
		{
			name: "services have no generation",
			gvr:  serviceGVR,
			obj:  service("prod", "svc", "ClusterIP"),
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "NodePort", "spec", "type")
			},
			want: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			ctx := testCtx(t)
			if tc.noStatus {
				c.SetStatusSubresource(tc.gvr.GroupResource(), false)
			}
			created := mustCreate(t, c, tc.gvr, tc.obj)
			if tc.want == 0 {
				_, found, _ := unstructured.NestedInt64(created.Object, "metadata", "generation")
				require.False(t, found, "no generation on create")
			}
			var got *unstructured.Unstructured
			if tc.drift {
				require.NoError(t, c.Drift(tc.gvr, created.GetNamespace(), created.GetName(), tc.mutate))
				var err error
				got, err = c.Peek(tc.gvr, created.GetNamespace(), created.GetName())
				require.NoError(t, err)
			} else {
				tc.mutate(created)
				var err error
				got, err = c.Update(ctx, tc.gvr, created)
				require.NoError(t, err)
			}
			require.Equal(t, tc.want, got.GetGeneration())
			require.NotEqual(t, created.GetResourceVersion(), got.GetResourceVersion(), "every change bumps resourceVersion")
		})
	}
}

func TestGenerationCannotBeSetByClients(t *testing.T) {
	c := newCluster(t, "c")
	obj := deployment("prod", "web", 1)
	obj.SetGeneration(42)
	created := mustCreate(t, c, deployGVR, obj)
	require.Equal(t, int64(1), created.GetGeneration())

	created.SetGeneration(7)
	created.SetLabels(map[string]string{"x": "y"})
	got, err := c.Update(testCtx(t), deployGVR, created)
	require.NoError(t, err)
	require.Equal(t, int64(1), got.GetGeneration())
}
