package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/scheduler"
	fedsync "github.com/fedkit/fedkit/sync"
)

// A cluster that was not ready when the scheduler last ran is absent from the schedule. When
// it is Ready again, sync may run before the scheduler has placed it again: sync must wait
// for the scheduler rather than delete the member objects there as "no longer placed" (found
// by the chaos soak, test/soak, in Run mode: a member that blipped lost a FederatedNamespace's
// namespace, and with it everything inside, until the scheduler caught up).
func TestSyncWaitsForTheSchedulerWhenAClusterIsReadyAgain(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	sched, err := scheduler.New(e.host, e.typ, scheduler.Options{Clock: e.clock})
	require.NoError(t, err)
	pass := func() {
		t.Helper()
		_, err := sched.Reconcile(ctx, key)
		require.NoError(t, err)
		_, _ = e.s.Reconcile(ctx, key)
	}
	e.apply(t, e.typ.FederatedGVR(), frontend)
	pass()
	require.NotNil(t, e.member(t, "azure"))

	// azure is cut off; the monitor (here Register) marks it not Ready; the scheduler leaves
	// it out; sync leaves its object alone, as it must for a cluster that is not ready.
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	pass()
	require.NotContains(t, schedule(t, e), "azure")

	// azure is back; sync runs first.
	require.NoError(t, e.fleet.Heal("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	res, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err)
	require.NotNil(t, e.member(t, "azure"), "deleted from a cluster the scheduler has not looked at since it is ready")
	require.Positive(t, res.RequeueAfter, "back once the scheduler has")

	// The scheduler places azure again; nothing was lost.
	pass()
	require.Contains(t, schedule(t, e), "azure")
	require.NotNil(t, e.member(t, "azure"))
}

func schedule(t *testing.T, e *env) []string {
	t.Helper()
	fed := e.fed(t)
	require.NotNil(t, fed.Status.Schedule)
	var out []string
	for _, c := range fed.Status.Schedule.Clusters {
		out = append(out, c.Name)
	}
	return out
}
