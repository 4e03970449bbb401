package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/internal/lease"
)

// TestLockRoundTrip writes a record as the elector does and reads it back, from the Lease
// as client-go's LeaseLock stores it.
func TestLockRoundTrip(t *testing.T) {
	ctx := context.Background()
	host := fake.NewCluster("host")
	l := lease.NewLock(host, "default", "leader", "a")
	require.Equal(t, "default/leader", l.Describe())
	require.Equal(t, "a", l.Identity())
	_, _, err := l.Get(ctx)
	require.Error(t, err, "no Lease yet")

	at := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	want := rl.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 15, AcquireTime: at, RenewTime: at, LeaderTransitions: 2}
	require.NoError(t, l.Create(ctx, want))
	got, _, err := l.Get(ctx)
	require.NoError(t, err)
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("record read back (-want +got):\n%s", diff)
	}

	u, err := host.Get(ctx, lease.LeaseGVR, "default", "leader")
	require.NoError(t, err)
	require.Equal(t, "Lease", u.GetKind())
	spec := u.Object["spec"].(map[string]any)
	require.Equal(t, "a", spec["holderIdentity"])
	require.EqualValues(t, 15, spec["leaseDurationSeconds"])
	require.Equal(t, "2026-11-30T12:00:00.000000Z", spec["renewTime"])
}

// TestLockSeesEveryRenewal: renewals within one second must look different to the elector,
// which times a holder's Lease from the last change it saw. With the record's JSON alone
// (whole seconds, as client-go's LeaseLock returns it) they looked alike, and a crashed
// holder's Lease was taken up to a second early.
func TestLockSeesEveryRenewal(t *testing.T) {
	ctx := context.Background()
	l := lease.NewLock(fake.NewCluster("host"), "default", "leader", "a")
	at := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	require.NoError(t, l.Create(ctx, rl.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 1, AcquireTime: at, RenewTime: at}))
	_, before, err := l.Get(ctx)
	require.NoError(t, err)
	later := metav1.NewTime(at.Add(100 * time.Millisecond))
	require.NoError(t, l.Update(ctx, rl.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 1, AcquireTime: at, RenewTime: later}))
	_, after, err := l.Get(ctx)
	require.NoError(t, err)
	require.NotEqual(t, string(before), string(after), "a renewal 100ms later")
}

// TestLockUpdateIsLocked: an Update based on a stale read fails with a Conflict, so a
// candidate cannot take a Lease its holder renewed since.
func TestLockUpdateIsLocked(t *testing.T) {
	ctx := context.Background()
	host := fake.NewCluster("host")
	a, b := lease.NewLock(host, "default", "leader", "a"), lease.NewLock(host, "default", "leader", "b")
	at := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	require.NoError(t, a.Create(ctx, rl.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 1, AcquireTime: at, RenewTime: at}))
	_, _, err := b.Get(ctx)
	require.NoError(t, err)
	require.NoError(t, a.Update(ctx, rl.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 1, AcquireTime: at, RenewTime: metav1.NewTime(at.Add(time.Second))}))
	err = b.Update(ctx, rl.LeaderElectionRecord{HolderIdentity: "b", LeaseDurationSeconds: 1, AcquireTime: at, RenewTime: at})
	require.Error(t, err)
	require.Equal(t, "a", holder(t, host, "leader"))
}
