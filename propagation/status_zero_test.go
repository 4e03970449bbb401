package propagation_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/propagation"
)

// A fleet that runs none of a native Deployment's replicas (scaled to 0, or blocked in every
// member) reports zero counts. The API server drops a Deployment status's zero counts (they
// are omitempty), so their absence is no difference: test/soak found the loop writing the same
// status on every pass, for good.
func TestZeroCountsAreNoChange(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	fedtest.Create(t, host, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
	fedtest.Create(t, host, cpps, webPolicy)
	fedtest.Create(t, host, deployments, nativeDeployment("web", "nginx:1"))
	p, err := propagation.New(host, []federation.TypeConfig{federation.DeploymentType}, propagation.Options{})
	require.NoError(t, err)
	key := federation.Key{Namespace: "shop", Name: "web"}
	_, err = p.Reconcile(ctx, key)
	require.NoError(t, err)

	// The collector reports that nothing runs.
	fed, err := host.Peek(fdeployments, "shop", "web")
	require.NoError(t, err)
	zero := map[string]any{"replicas": int64(0), "readyReplicas": int64(0), "availableReplicas": int64(0), "updatedReplicas": int64(0), "clusters": int64(2)}
	require.NoError(t, unstructured.SetNestedMap(fed.Object, zero, "status", "aggregated"))
	_, err = host.UpdateStatus(ctx, fdeployments, fed)
	require.NoError(t, err)

	_, err = p.Reconcile(ctx, key)
	require.NoError(t, err)
	host.ClearActions()
	for range 3 {
		_, err = p.Reconcile(ctx, key)
		require.NoError(t, err)
	}
	if w := writes(host.Actions()); len(w) > 0 {
		native, _ := host.Peek(deployments, "shop", "web")
		t.Errorf("passes over unchanged objects wrote %v; the native status is %v", w, native.Object["status"])
	}
}
