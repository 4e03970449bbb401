package fake_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
