package fake_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

func TestFleetRegister(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1"})
	fleet.Add("us", map[string]string{federation.RegionLabel: "us-east-1"})
	require.NoError(t, fleet.Register(ctx, host))

	ready := func(name string) metav1.ConditionStatus {
		u, err := host.Get(ctx, federation.ClusterGVR, "", name)
		require.NoError(t, err)
		c, err := federation.ClusterFromUnstructured(u)
		require.NoError(t, err)
		require.Equal(t, name, c.Name)
		require.NotEmpty(t, c.Spec.Region, "spec comes from the member's labels")
		return meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady).Status
	}
	require.Equal(t, metav1.ConditionTrue, ready("eu"))

	// Registering again refreshes the status: a partition shows as Ready=False.
	require.NoError(t, fleet.Partition("eu"))
	require.NoError(t, fleet.Register(ctx, host))
	require.Equal(t, metav1.ConditionFalse, ready("eu"))
	require.Equal(t, metav1.ConditionTrue, ready("us"))

	list, err := host.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 2)
}

// A cluster monitor writing a Cluster while Register writes it: Register's stale write meets
// a Conflict, reads again and writes the fleet's status anyway.
func TestFleetRegisterRetriesConflicts(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	fleet.Add("eu", nil)
	require.NoError(t, fleet.Register(ctx, host))
	require.NoError(t, fleet.Partition("eu"))

	var conflicts atomic.Int32
	var probes atomic.Int32
	monitor := func(ctx context.Context, next federation.ClusterClient) {
		// The monitor's write goes first, so the caller's copy is stale.
		cur, err := next.Get(ctx, federation.ClusterGVR, "", "eu")
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedSlice(cur.Object, []any{map[string]any{
			"type": "Offline", "status": "False", "reason": "Probed", "message": fmt.Sprintf("probe %d", probes.Add(1)),
			"lastTransitionTime": "2026-11-30T12:00:00Z",
		}}, "status", "conditions"))
		_, err = next.UpdateStatus(ctx, federation.ClusterGVR, cur)
		require.NoError(t, err)
	}
	host.SetHooks(fake.Hooks{
		Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if conflicts.Add(1) == 1 {
				monitor(ctx, next)
			}
			return next.Update(ctx, gvr, obj)
		},
		UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if conflicts.Add(1) == 3 { // after the Update's retry
				monitor(ctx, next)
			}
			return next.UpdateStatus(ctx, gvr, obj)
		},
	})
	require.NoError(t, fleet.Register(ctx, host))
	host.SetHooks(fake.Hooks{})
	require.EqualValues(t, 4, conflicts.Load(), "Update, its retry, UpdateStatus, its retry (the monitor writes past the hooks)")

	u, err := host.Get(ctx, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	c, err := federation.ClusterFromUnstructured(u)
	require.NoError(t, err)
	require.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(c.Status.Conditions, federation.ConditionReady).Status)
}
