package kube_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/testenv"
)

// TestClientDiscovery checks the capabilities beyond ClusterClient on a real server: health,
// version, and kind-to-resource mapping that notices CRDs installed after the first lookup.
func TestClientDiscovery(t *testing.T) {
	env := testenv.Shared(t)
	ctx := t.Context()
	c := env.Client(t, memberName)

	require.NoError(t, c.Healthy(ctx))
	v, err := c.ServerVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, testenv.KubernetesVersion, v.GitVersion)

	tests := []struct {
		gvk        schema.GroupVersionKind
		want       schema.GroupVersionResource
		namespaced bool
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, true},
	}
	for _, tt := range tests {
		m, err := c.RESTMapping(tt.gvk)
		require.NoError(t, err, tt.gvk.String())
		require.Equal(t, tt.want, m.Resource)
		require.Equal(t, tt.namespaced, m.Scope.Name() == meta.RESTScopeNameNamespace)
	}

	// A kind installed after discovery was cached is found on the next lookup.
	widget := schema.GroupVersionKind{Group: "example.fedkit.io", Version: "v1", Kind: "Widget"}
	_, err = c.RESTMapping(widget)
	require.True(t, meta.IsNoMatchError(err), "want a no-match error, got %v", err)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.fedkit.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.fedkit.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTrue(),
				}},
			}},
		},
	}
	require.NoError(t, conformance.InstallCRDs(ctx, c, crd))
	require.Eventually(t, func() bool {
		m, err := c.RESTMapping(widget)
		return err == nil && m.Resource.Resource == "widgets"
	}, 10*time.Second, 100*time.Millisecond)
}

func ptrTrue() *bool { b := true; return &b }

// TestClientAuthErrors checks that a refused credential is an API answer (Unauthorized), not
// an unreachable cluster.
func TestClientAuthErrors(t *testing.T) {
	env := testenv.Shared(t)
	cfg := env.Config(memberName)
	cfg.BearerToken = "not-the-token"
	c, err := kube.New(cfg, kube.Options{})
	require.NoError(t, err)
	_, err = c.List(t.Context(), federation.SecretGVR, "default", metav1.ListOptions{})
	require.True(t, apierrors.IsUnauthorized(err), "want Unauthorized, got %v", err)
	require.False(t, errors.Is(err, federation.ErrUnreachable))
	require.NotContains(t, err.Error(), "not-the-token")
}
