package fake_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
)

// TestResourceDefaults checks the scope, status-subresource and generation tables through
// behaviour: whether a namespace is required, whether UpdateStatus exists, and whether
// Create sets a generation.
func TestResourceDefaults(t *testing.T) {
	tests := []struct {
		gvr        string // group/version/resource, "" group for core
		kind       string
		namespaced bool
		status     bool
		generation bool
	}{
		{"/v1/namespaces", "Namespace", false, true, false},
		{"/v1/nodes", "Node", false, true, false},
		{"/v1/persistentvolumes", "PersistentVolume", false, true, false},
		{"/v1/pods", "Pod", true, true, true},
		{"/v1/services", "Service", true, true, false},
		{"/v1/configmaps", "ConfigMap", true, false, false},
		{"/v1/secrets", "Secret", true, false, false},
		{"/v1/serviceaccounts", "ServiceAccount", true, false, false},
		{"/v1/podtemplates", "PodTemplate", true, false, true},
		{"storage.k8s.io/v1/csidrivers", "CSIDriver", false, false, false},
		{"apps/v1/deployments", "Deployment", true, true, true},
		{"apps/v1/daemonsets", "DaemonSet", true, true, true},
		{"apps/v1/controllerrevisions", "ControllerRevision", true, false, false},
		{"batch/v1/jobs", "Job", true, true, true},
		{"autoscaling/v2/horizontalpodautoscalers", "HorizontalPodAutoscaler", true, true, true},
		{"networking.k8s.io/v1/ingresses", "Ingress", true, true, true},
		{"networking.k8s.io/v1/networkpolicies", "NetworkPolicy", true, false, true},
		{"networking.k8s.io/v1/ingressclasses", "IngressClass", false, false, true},
		{"policy/v1/poddisruptionbudgets", "PodDisruptionBudget", true, true, true},
		{"discovery.k8s.io/v1/endpointslices", "EndpointSlice", true, false, true},
		{"coordination.k8s.io/v1/leases", "Lease", true, false, false},
		{"rbac.authorization.k8s.io/v1/clusterroles", "ClusterRole", false, false, false},
		{"rbac.authorization.k8s.io/v1/roles", "Role", true, false, false},
		{"storage.k8s.io/v1/storageclasses", "StorageClass", false, false, false},
		{"scheduling.k8s.io/v1/priorityclasses", "PriorityClass", false, false, true},
		{"node.k8s.io/v1/runtimeclasses", "RuntimeClass", false, false, false},
		{"certificates.k8s.io/v1/certificatesigningrequests", "CertificateSigningRequest", false, true, false},
		{"admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, false, true},
		{"apiregistration.k8s.io/v1/apiservices", "APIService", false, true, false},
		{"core.federation.k8s.io/v1alpha1/clusters", "Cluster", false, true, true},
		{"core.federation.k8s.io/v1alpha1/replicaschedulingpreferences", "ReplicaSchedulingPreference", true, true, true}, // status.autoscale
		{"types.federation.k8s.io/v1alpha1/federateddeployments", "FederatedDeployment", true, true, true},
		{"example.com/v1/widgets", "Widget", true, true, true},
	}
	c := newHost(t, "c") // every case creates "x" in its own resource
	for _, tc := range tests {
		t.Run(tc.gvr, func(t *testing.T) {
			parts := strings.Split(tc.gvr, "/")
			gvr := schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
			ctx := testCtx(t)
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": gvr.GroupVersion().String(), "kind": tc.kind,
				"metadata": map[string]any{"name": "x"},
			}}

			_, err := c.Create(ctx, gvr, obj)
			if tc.namespaced {
				require.True(t, apierrors.IsBadRequest(err), "namespaced: Create without namespace = %v", err)
				obj.SetNamespace("prod")
				_, err = c.Create(ctx, gvr, obj)
			}
			require.NoError(t, err)
			got, err := c.Get(ctx, gvr, "prod", "x")
			require.NoError(t, err)

			_, found, _ := unstructured.NestedInt64(got.Object, "metadata", "generation")
			require.Equal(t, tc.generation, found, "has a generation")

			_, err = c.UpdateStatus(ctx, gvr, got)
			require.Equal(t, tc.status, err == nil, "has a status subresource: UpdateStatus = %v", err)
			if !tc.status {
				require.True(t, apierrors.IsNotFound(err))
			}
		})
	}
}

func TestSetServerVersion(t *testing.T) {
	c := newCluster(t, "c")
	v, err := c.ServerVersion(testCtx(t))
	require.NoError(t, err)
	v.GitVersion = "mutated"
	v, err = c.ServerVersion(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, "v1.37.2-fake", v.GitVersion, "callers get a copy")

	want := *v
	want.Minor, want.GitVersion = "30", "v1.30.4"
	c.SetServerVersion(want)
	v, err = c.ServerVersion(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, want, *v)

	c.FailOn(fake.VerbVersion, apierrors.NewInternalError(errors.New("boom")), 1)
	_, err = c.ServerVersion(testCtx(t))
	require.Error(t, err)
}
