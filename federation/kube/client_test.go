package kube_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

func cm(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// TestNewWithDynamic checks that every verb reaches Options.Dynamic and that errors are
// prefixed, describe the request, and keep the apierrors value.
func TestNewWithDynamic(t *testing.T) {
	ctx := t.Context()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList"})
	c, err := kube.New(nil, kube.Options{Dynamic: dyn})
	require.NoError(t, err)
	require.Same(t, dyn, c.Dynamic())
	_, err = kube.New(&rest.Config{Host: "https://example.com"}, kube.Options{Dynamic: dyn})
	require.ErrorIs(t, err, kube.ErrInvalidConfig, "a rest.Config and a dynamic client are one too many")

	w, err := c.Watch(ctx, configMaps, "ns", metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()

	created, err := c.Create(ctx, configMaps, cm("ns", "a"))
	require.NoError(t, err)
	require.Equal(t, watch.Added, (<-w.ResultChan()).Type)
	created.SetLabels(map[string]string{"x": "1"})
	_, err = c.Update(ctx, configMaps, created)
	require.NoError(t, err)
	_, err = c.UpdateStatus(ctx, configMaps, created)
	require.NoError(t, err)
	patched, err := c.Patch(ctx, configMaps, "ns", "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"y":"2"}}}`))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"x": "1", "y": "2"}, patched.GetLabels())
	l, err := c.List(ctx, configMaps, "ns", metav1.ListOptions{LabelSelector: "y=2"})
	require.NoError(t, err)
	require.Len(t, l.Items, 1)
	require.NoError(t, c.Delete(ctx, configMaps, "ns", "a", metav1.DeleteOptions{}))

	tests := []struct {
		name   string
		call   func() error
		prefix string
		check  func(error) bool
	}{
		{"get", func() error { _, err := c.Get(ctx, configMaps, "ns", "a"); return err }, "kube: get configmaps ns/a: ", apierrors.IsNotFound},
		{"update", func() error { _, err := c.Update(ctx, configMaps, cm("ns", "a")); return err }, "kube: update configmaps ns/a: ", apierrors.IsNotFound},
		{"patch", func() error {
			_, err := c.Patch(ctx, configMaps, "ns", "a", types.MergePatchType, []byte(`{}`))
			return err
		}, "kube: patch configmaps ns/a: ", apierrors.IsNotFound},
		{"delete", func() error { return c.Delete(ctx, configMaps, "ns", "a", metav1.DeleteOptions{}) }, "kube: delete configmaps ns/a: ", apierrors.IsNotFound},
		{"create twice", func() error {
			if _, err := c.Create(ctx, configMaps, cm("ns", "b")); err != nil {
				return err
			}
			_, err := c.Create(ctx, configMaps, cm("ns", "b"))
			return err
		}, "kube: create configmaps ns/b: ", apierrors.IsAlreadyExists},
		{"nil object", func() error { _, err := c.Create(ctx, configMaps, nil); return err }, "kube: create configmaps: ",
			func(err error) bool { return errors.Is(err, federation.ErrInvalidObject) }},
		{"health", func() error { return c.Healthy(ctx) }, "kube: check health: ", func(err error) bool {
			return errors.Is(err, kube.ErrNoDiscovery) && errors.Is(err, errors.ErrUnsupported)
		}},
		{"version", func() error { _, err := c.ServerVersion(ctx); return err }, "kube: get server version: ",
			func(err error) bool { return errors.Is(err, kube.ErrNoDiscovery) }},
		{"mapping", func() error {
			_, err := c.RESTMapping(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
			return err
		}, "kube: map kind /v1, Kind=ConfigMap: ", func(err error) bool { return errors.Is(err, kube.ErrNoDiscovery) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.Error(t, err)
			require.True(t, tt.check(err), "%v", err)
			require.Contains(t, err.Error(), tt.prefix)
			require.NotErrorIs(t, err, federation.ErrUnreachable)
		})
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  *rest.Config
		opts kube.Options
	}{
		{"nil config", nil, kube.Options{}},
		{"negative Burst", &rest.Config{Host: "https://x"}, kube.Options{Burst: -1}},
		{"negative timeout", &rest.Config{Host: "https://x"}, kube.Options{DiscoveryTimeout: -1}},
		{"bad CA", &rest.Config{Host: "https://x", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("not pem")}}, kube.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kube.New(tt.cfg, tt.opts)
			require.ErrorIs(t, err, kube.ErrInvalidConfig)
		})
	}
	c, err := kube.New(&rest.Config{Host: "https://127.0.0.1:1"}, kube.Options{})
	require.NoError(t, err, "New does not contact the server")
	require.NotNil(t, c.Dynamic())
}
