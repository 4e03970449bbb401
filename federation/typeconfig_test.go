package federation_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

func TestTypeConfig(t *testing.T) {
	tests := []struct {
		name          string
		tc            federation.TypeConfig
		wantFedGVR    string
		wantTargetGVR string
		wantFedNS     bool
		wantDivisible bool
	}{
		{name: "deployment", tc: federation.DeploymentType,
			wantFedGVR: "types.federation.k8s.io/v1alpha1, Resource=federateddeployments", wantTargetGVR: "apps/v1, Resource=deployments",
			wantFedNS: true, wantDivisible: true},
		{name: "namespace", tc: federation.NamespaceType,
			wantFedGVR: "types.federation.k8s.io/v1alpha1, Resource=federatednamespaces", wantTargetGVR: "/v1, Resource=namespaces",
			wantFedNS: true},
		{name: "custom resource", tc: federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", false, ""),
			wantFedGVR: "types.federation.k8s.io/v1alpha1, Resource=federatedwidgets", wantTargetGVR: "example.com/v1, Resource=widgets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.tc.Validate())
			require.Equal(t, tc.wantFedGVR, tc.tc.FederatedGVR().String())
			require.Equal(t, tc.wantTargetGVR, tc.tc.TargetGVR().String())
			require.Equal(t, tc.wantFedNS, tc.tc.FederatedNamespaced())
			require.Equal(t, tc.wantDivisible, tc.tc.Divisible())
			require.Equal(t, "Federated"+tc.tc.Target.Kind, tc.tc.Federated.Kind)
		})
	}
	require.ErrorIs(t, federation.TypeConfig{}.Validate(), federation.ErrUnknownType)
	require.Equal(t, []string{"spec", "replicas"}, federation.StatefulSetType.ReplicasFields())

	got, ok := federation.BuiltinTypeFor("FederatedService")
	require.True(t, ok)
	require.Equal(t, federation.ServiceType, got)
	_, ok = federation.BuiltinTypeFor("Pod")
	require.False(t, ok)
	require.Len(t, federation.BuiltinTypes(), 12)
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, federation.AddToScheme(s))
	for _, gvk := range []schema.GroupVersionKind{
		federation.ClusterGVK,
		federation.ReplicaSchedulingPreferenceGVK,
		federation.TypesGroupVersion.WithKind("FederatedDeployment"),
		federation.TypesGroupVersion.WithKind("FederatedIngressList"),
	} {
		require.True(t, s.Recognizes(gvk), "scheme should recognize %s", gvk)
	}
	obj, err := s.New(federation.TypesGroupVersion.WithKind("FederatedConfigMap"))
	require.NoError(t, err)
	require.IsType(t, &federation.FederatedObject{}, obj)

	widget := federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "spec.replicas")
	require.NoError(t, federation.AddFederatedKind(s, widget))
	require.True(t, s.Recognizes(widget.Federated))
	require.ErrorIs(t, federation.AddFederatedKind(s, federation.TypeConfig{}), federation.ErrUnknownType)
}
