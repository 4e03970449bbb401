package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// A leader's loops hand their status changes to the shared status writer, which holds them
// for its window. When the leader loses its Lease (its renewals fail), what is pending is
// dropped, not written: a successor may be leading already, and decides again from the
// objects. Here the new object's members were written, its status was pending, and after
// the loss no status write reaches the host however far the clock goes.
func TestLeaderThatLosesItsLeaseDropsPendingStatus(t *testing.T) {
	e := newEnv(t)
	opts := e.options(federation.ConfigMapType)
	opts.Disable.DNS = true
	lease := fastLease()
	lease.Name = "drop"
	opts.LeaderElection = &lease
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	stepUntil(t, e.clock, time.Second, "leading, both clusters Ready", func() bool {
		return e.condition(federation.ClusterGVR, "eu", "Ready") == "True" && e.condition(federation.ClusterGVR, "us", "Ready") == "True"
	})

	gvr := federation.ConfigMapType.FederatedGVR()
	create(t, e.host, gvr, federatedConfigMap("cfg"))
	// Sync reads the scheduler's pending schedule and writes the members without the clock
	// moving; the status waits for the writer's window, on the fake clock.
	require.Eventually(t, func() bool {
		for _, c := range []string{"eu", "us"} {
			m, _ := e.fleet.Member(c)
			if _, err := m.Peek(federation.ConfigMapType.TargetGVR(), "default", "cfg"); err != nil {
				return false
			}
		}
		return true
	}, 10*time.Second, time.Millisecond, "the members written")
	require.Empty(t, e.condition(gvr, "cfg", "Propagated"), "the status is pending")

	e.host.SetHooks(fake.Hooks{Update: func(ctx context.Context, next federation.ClusterClient, g schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if g == leasesGVR {
			return nil, apierrors.NewServiceUnavailable("cut off from the Lease")
		}
		return next.Update(ctx, g, obj)
	}})
	require.Eventually(t, func() bool {
		return loopStatus(t, cp, "sync/FederatedConfigMap").State == controlplane.StateStandby
	}, 20*time.Second, time.Millisecond, "the Lease lost: the loops stand by")
	e.host.ClearActions()
	for range 20 {
		e.clock.Step(time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	for _, a := range e.host.Actions() {
		if a.Verb == fake.VerbUpdateStatus && a.Resource == gvr {
			t.Errorf("a status write after the Lease was lost: %s", a)
		}
	}
	require.Empty(t, e.condition(gvr, "cfg", "Propagated"), "the pending status was dropped")
}
