package override_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// obj decodes YAML into an unstructured object, numbers as int64 like the API machinery.
func obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, utiljson.Unmarshal(j, &m))
	return &unstructured.Unstructured{Object: m}
}

// ops decodes a YAML list of operations.
func ops(t testing.TB, y string) []federation.OverrideOp {
	t.Helper()
	var out []federation.OverrideOp
	require.NoError(t, yaml.Unmarshal([]byte(y), &out))
	return out
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  labels: {app: web, app.kubernetes.io/name: web}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - {name: app, image: "nginx:1.27", args: [--a, --b]}
      - {name: sidecar, image: envoy}
`

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		ops     string
		want    string // YAML of the expected object; "" = unchanged
		wantErr error
	}{
		{
			name: "replace is the default op",
			ops:  `[{path: /spec/replicas, value: 5}]`,
			want: `{spec: {replicas: 5}}`,
		},
		{
			name: "add a label with an escaped key",
			ops:  `[{op: add, path: /metadata/labels/example.com~1tier, value: gold}]`,
			want: `{metadata: {labels: {example.com/tier: gold}}}`,
		},
		{
			name: "add at an array index inserts",
			ops:  `[{op: add, path: /spec/template/spec/containers/0/args/1, value: --x}]`,
			want: `{spec: {template: {spec: {containers: [{args: [--a, --x, --b]}]}}}}`,
		},
		{
			name: "add at - appends",
			ops:  `[{op: add, path: /spec/template/spec/containers/0/args/-, value: --z}]`,
			want: `{spec: {template: {spec: {containers: [{args: [--a, --b, --z]}]}}}}`,
		},
		{
			name: "add at the length appends",
			ops:  `[{op: add, path: /spec/template/spec/containers/0/args/2, value: --z}]`,
			want: `{spec: {template: {spec: {containers: [{args: [--a, --b, --z]}]}}}}`,
		},
		{
			name: "remove an array element",
			ops:  `[{op: remove, path: /spec/template/spec/containers/0/args/0}]`,
			want: `{spec: {template: {spec: {containers: [{args: [--b]}]}}}}`,
		},
		{
			name: "test then replace",
			ops:  `[{op: test, path: /spec/replicas, value: 3}, {op: replace, path: /spec/replicas, value: 1}]`,
			want: `{spec: {replicas: 1}}`,
		},
		{
			name: "test compares numbers by value: 3.0 equals 3",
			ops:  `[{op: test, path: /spec/replicas, value: 3.0}]`,
		},
		{
			name: "add replaces an existing member",
			ops:  `[{op: add, path: /spec/replicas, value: 9}]`,
			want: `{spec: {replicas: 9}}`,
		},
		{
			name: "an added object can be edited by a later op",
			ops:  `[{op: add, path: /spec/strategy, value: {type: Recreate}}, {op: add, path: /spec/strategy/x, value: 1}]`,
			want: `{spec: {strategy: {type: Recreate, x: 1}}}`,
		},
		{name: "failed test leaves the object alone", ops: `[{op: replace, path: /spec/replicas, value: 1}, {op: test, path: /spec/replicas, value: 7}]`, wantErr: override.ErrTestFailed},
		{name: "test on an absent member fails", ops: `[{op: test, path: /spec/paused, value: false}]`, wantErr: override.ErrTestFailed},
		{name: "a null value in YAML is no value", ops: `[{op: add, path: /spec/paused, value: null}]`, wantErr: override.ErrMissingValue},
		{name: "replace needs the member", ops: `[{path: /spec/paused, value: true}]`, wantErr: override.ErrPathNotFound},
		{name: "remove needs the member", ops: `[{op: remove, path: /metadata/annotations}]`, wantErr: override.ErrPathNotFound},
		{name: "add needs the parent", ops: `[{op: add, path: /metadata/annotations/a, value: b}]`, wantErr: override.ErrPathNotFound},
		{name: "cannot walk through a scalar", ops: `[{op: add, path: /spec/replicas/x, value: 1}]`, wantErr: override.ErrPathNotFound},
		{name: "index out of range", ops: `[{op: add, path: /spec/template/spec/containers/0/args/3, value: x}]`, wantErr: override.ErrInvalidIndex},
		{name: "leading zero index", ops: `[{path: /spec/template/spec/containers/01/image, value: x}]`, wantErr: override.ErrInvalidIndex},
		{name: "negative index", ops: `[{op: remove, path: /spec/template/spec/containers/-1}]`, wantErr: override.ErrInvalidIndex},
		{name: "- only appends", ops: `[{op: replace, path: /spec/template/spec/containers/-, value: {}}]`, wantErr: override.ErrInvalidIndex},
		{name: "name is identity", ops: `[{path: /metadata/name, value: other}]`, wantErr: override.ErrIdentityPath},
		{name: "namespace is identity", ops: `[{op: remove, path: /metadata/namespace}]`, wantErr: override.ErrIdentityPath},
		{name: "generateName is identity", ops: `[{op: add, path: /metadata/generateName, value: x-}]`, wantErr: override.ErrIdentityPath},
		{name: "kind is identity", ops: `[{path: /kind, value: StatefulSet}]`, wantErr: override.ErrIdentityPath},
		{name: "apiVersion is identity", ops: `[{path: /apiVersion, value: v2}]`, wantErr: override.ErrIdentityPath},
		{name: "metadata as a whole is identity", ops: `[{path: /metadata, value: {}}]`, wantErr: override.ErrIdentityPath},
		{name: "move is not supported", ops: `[{op: move, path: /spec/x}]`, wantErr: override.ErrUnsupportedOp},
		{name: "empty path", ops: `[{path: "", value: {}}]`, wantErr: override.ErrInvalidPath},
		{name: "empty token", ops: `[{path: /spec//replicas, value: 1}]`, wantErr: override.ErrInvalidPath},
		{name: "bad escape", ops: `[{path: /spec/~2, value: 1}]`, wantErr: override.ErrInvalidPath},
		{name: "missing value", ops: `[{op: add, path: /spec/x}]`, wantErr: override.ErrMissingValue},
		{name: "no ops", ops: `[]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := obj(t, deployment)
			want := obj(t, deployment)
			if tc.want != "" {
				patch := obj(t, tc.want)
				want.Object = mergeForTest(want.Object, patch.Object)
			}
			err := override.Apply(got, ops(t, tc.ops))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				var pe *override.PathError
				require.True(t, errors.As(err, &pe), "error %v is not a *PathError", err)
				want = obj(t, deployment) // atomic: unchanged
			} else {
				require.NoError(t, err)
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("Apply() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// mergeForTest overlays patch on base: maps merge, arrays of objects merge element-wise by
// index (extra elements of either are kept), arrays of scalars and scalars replace. It keeps the expected values in the table short.
func mergeForTest(base, patch any) map[string]any {
	return merge(base, patch).(map[string]any)
}

func merge(base, patch any) any {
	switch p := patch.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return p
		}
		for k, v := range p {
			b[k] = merge(b[k], v)
		}
		return b
	case []any:
		b, ok := base.([]any)
		if !ok || len(p) == 0 {
			return p
		}
		if _, objects := p[0].(map[string]any); !objects {
			return p // arrays of scalars are replaced whole
		}
		out := make([]any, max(len(p), len(b)))
		for i := range out {
			switch {
			case i >= len(p):
				out[i] = b[i]
			case i < len(b):
				out[i] = merge(b[i], p[i])
			default:
				out[i] = p[i]
			}
		}
		return out
	default:
		return p
	}
}

func TestApplyErrorNamesThePath(t *testing.T) {
	err := override.Apply(obj(t, deployment), ops(t, `[{path: /spec/replicas, value: 2}, {op: remove, path: /spec/template/spec/volumes}]`))
	var pe *override.PathError
	require.ErrorAs(t, err, &pe)
	got := [3]string{pe.Cluster, pe.Op, pe.Path}
	if diff := cmp.Diff([3]string{"", "remove", "/spec/template/spec/volumes"}, got); diff != "" {
		t.Errorf("PathError {Cluster, Op, Path} mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, `remove /spec/template/spec/volumes: override: path not found: no member "volumes" to remove`, err.Error())
}

func TestApplyDoesNotShareMemoryWithTheValue(t *testing.T) {
	u := obj(t, deployment)
	p, err := override.Compile(ops(t, `[{op: add, path: /spec/extra, value: {list: [1]}}]`))
	require.NoError(t, err)
	require.NoError(t, p.Apply(u))
	extra := u.Object["spec"].(map[string]any)["extra"].(map[string]any)
	extra["list"].([]any)[0] = int64(99)
	again := obj(t, deployment)
	require.NoError(t, p.Apply(again))
	require.Equal(t, int64(1), again.Object["spec"].(map[string]any)["extra"].(map[string]any)["list"].([]any)[0])
}

func TestPointer(t *testing.T) {
	require.Equal(t, "/metadata/labels/app.kubernetes.io~1name", override.Pointer("metadata", "labels", "app.kubernetes.io/name"))
	require.Equal(t, "/a~0b~1c", override.Pointer("a~b/c"))
}

func TestApplyNull(t *testing.T) {
	null := &federation.RawValue{Raw: []byte("null")}
	u := obj(t, deployment)
	require.NoError(t, override.Apply(u, []federation.OverrideOp{{Op: "add", Path: "/spec/paused", Value: null}, {Op: "test", Path: "/spec/paused", Value: null}}))
	require.Contains(t, u.Object["spec"], "paused")
	// RFC 6902: test compares with the value at the location; an absent member has none.
	err := override.Apply(u, []federation.OverrideOp{{Op: "test", Path: "/spec/minReadySeconds", Value: null}})
	require.ErrorIs(t, err, override.ErrTestFailed)
}
