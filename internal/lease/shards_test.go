package lease_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/lease"
)

// shardProcess starts Shards as who, recording its work in j.
func shardProcess(host federation.ClusterClient, j *journal, who string, count int, release bool) *process {
	opts := fast("fed", who)
	opts.Count, opts.ReleaseOnCancel = count, release
	return startProcess(func(ctx context.Context) error {
		return lease.Shards(ctx, host, opts, func(ctx context.Context, s federation.Shard) error {
			if s.Count != count {
				return fmt.Errorf("shard %s; want Count %d", s, count)
			}
			return j.work(who, s.Index, 0)(ctx)
		})
	})
}

// perProcess returns how many shards each process runs now, and fails the test if a shard
// runs twice.
func perProcess(t *testing.T, j *journal) map[string]int {
	t.Helper()
	out := map[string]int{}
	for shard, who := range j.running() {
		if len(who) > 1 {
			t.Fatalf("shard %d runs in %v at once", shard, who)
		}
		out[who[0]]++
	}
	return out
}

// waitSpread waits until every shard of count runs and the processes run want shards each.
func waitSpread(t *testing.T, j *journal, count int, want map[string]int) time.Time {
	t.Helper()
	var got map[string]int
	ok := assertEventually(func() bool {
		got = perProcess(t, j)
		n := 0
		for _, c := range got {
			n += c
		}
		return n == count && equalCounts(got, want)
	}, 15*time.Second)
	require.True(t, ok, "shards per process: got %v; want %v", got, want)
	return time.Now()
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func assertEventually(cond func() bool, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

func TestShardsSpreadAndTakeOverADeadPeer(t *testing.T) {
	host := fake.NewCluster("host")
	j := &journal{}
	procs := map[string]*process{}
	for _, who := range []string{"a", "b", "c"} {
		procs[who] = shardProcess(host, j, who, 6, false)
	}
	waitSpread(t, j, 6, map[string]int{"a": 2, "b": 2, "c": 2})
	spans := len(j.snapshot())
	require.Never(t, func() bool { return len(j.snapshot()) != spans }, time.Second, 10*time.Millisecond, "a fair spread stays put")

	killed := time.Now()
	require.NoError(t, procs["b"].stop(t)) // no release: as a crash leaves its Leases
	settled := waitSpread(t, j, 6, map[string]int{"a": 3, "c": 3})
	var lastStart time.Time
	for _, s := range j.snapshot() {
		lastStart = maxTime(lastStart, s.start)
	}
	t.Logf("b's shards moved to a and c %s after b died (settled after %s)", lastStart.Sub(killed), settled.Sub(killed))
	require.Less(t, lastStart.Sub(killed), 2*time.Second, "LeaseDuration 1s, plus RetryPeriods")
	for _, who := range []string{"a", "c"} {
		require.NoError(t, procs[who].stop(t))
	}
	j.requireNoOverlap(t)
}

func TestShardsHandOverToAPeerThatJoins(t *testing.T) {
	host := fake.NewCluster("host")
	j := &journal{}
	a := shardProcess(host, j, "a", 4, true)
	waitSpread(t, j, 4, map[string]int{"a": 4})
	b := shardProcess(host, j, "b", 4, true)
	waitSpread(t, j, 4, map[string]int{"a": 2, "b": 2})

	// A graceful stop releases the shards: they move without waiting for the Leases to
	// expire.
	stopped := time.Now()
	require.NoError(t, a.stop(t))
	waitSpread(t, j, 4, map[string]int{"b": 4})
	var lastStart time.Time
	for _, s := range j.snapshot() {
		lastStart = maxTime(lastStart, s.start)
	}
	t.Logf("a's released shards moved to b %s after a stopped", lastStart.Sub(stopped))
	require.Less(t, lastStart.Sub(stopped), time.Second, "released shards are taken before a Lease could expire")
	require.NoError(t, b.stop(t))
	j.requireNoOverlap(t)
	members, err := host.List(context.Background(), lease.LeaseGVR, "default", metav1.ListOptions{LabelSelector: lease.RoleLabel + "=member"})
	require.NoError(t, err)
	require.Empty(t, members.Items, "a graceful stop deletes the presence Lease")
}

func TestShardsRefuseWhileAnotherCountRuns(t *testing.T) {
	host := fake.NewCluster("host")
	j := &journal{}
	old := shardProcess(host, j, "old", 4, true)
	waitSpread(t, j, 4, map[string]int{"old": 4})
	next := shardProcess(host, j, "next", 3, true)
	require.Never(t, func() bool { return perProcess(t, j)["next"] > 0 }, 1500*time.Millisecond, 10*time.Millisecond,
		"a process with another Count claims nothing while a peer with the old one holds shards")
	require.NoError(t, old.stop(t))
	waitSpread(t, j, 3, map[string]int{"next": 3})
	require.NoError(t, next.stop(t))
}

func TestShardsReturnsWhenAWorkFails(t *testing.T) {
	host := fake.NewCluster("host")
	boom := errors.New("boom")
	opts := fast("fed", "a")
	opts.Count = 3
	err := lease.Shards(context.Background(), host, opts, func(ctx context.Context, s federation.Shard) error {
		if s.Index == 1 {
			return boom
		}
		<-ctx.Done()
		return nil
	})
	require.ErrorIs(t, err, boom)
}

func TestShardsRejectsOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*lease.Options)
		want string
	}{
		{"no count", func(o *lease.Options) { o.Count = 0 }, "Count must be at least 1"},
		{"long name", func(o *lease.Options) { o.Name = string(slices.Repeat([]byte("x"), 64)) }, "longer than 63"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := fast("fed", "a")
			opts.Count = 2
			tc.edit(&opts)
			err := lease.Shards(context.Background(), fake.NewCluster("host"), opts, func(context.Context, federation.Shard) error { return nil })
			require.ErrorIs(t, err, lease.ErrInvalidOptions)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Options.Annotations are on every Lease a process writes: Elect's Lease, the shard Leases
// it holds and its presence Lease, next to Shards' own annotations. A key that is no valid
// annotation key is refused before anything is written.
func TestAnnotationsOnEveryLease(t *testing.T) {
	host := fake.NewCluster("host")
	ann := map[string]string{"example.com/version": "v1.2.3"}
	annotated := func(name string) bool {
		u, err := host.Get(context.Background(), lease.LeaseGVR, "default", name)
		return err == nil && u.GetAnnotations()["example.com/version"] == "v1.2.3"
	}

	elect := fast("leader", "a")
	elect.Annotations = ann
	leading := make(chan struct{})
	p := startProcess(func(ctx context.Context) error {
		return lease.Elect(ctx, host, elect, func(ctx context.Context) error {
			close(leading)
			<-ctx.Done()
			return nil
		})
	})
	<-leading
	require.True(t, annotated("leader"), "Elect's Lease")
	require.NoError(t, p.stop(t))

	shards := fast("fed", "a")
	shards.Count, shards.Annotations = 2, ann
	p = startProcess(func(ctx context.Context) error {
		return lease.Shards(ctx, host, shards, func(ctx context.Context, _ federation.Shard) error {
			<-ctx.Done()
			return nil
		})
	})
	require.Eventually(t, func() bool { return annotated("fed-0") && annotated("fed-1") }, 10*time.Second, 5*time.Millisecond, "the shard Leases")
	list, err := host.List(context.Background(), lease.LeaseGVR, "default", metav1.ListOptions{LabelSelector: lease.RoleLabel + "=member"})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	require.Equal(t, "v1.2.3", list.Items[0].GetAnnotations()["example.com/version"], "the presence Lease")
	u, err := host.Get(context.Background(), lease.LeaseGVR, "default", "fed-0")
	require.NoError(t, err)
	require.Equal(t, "2", u.GetAnnotations()[lease.CountAnnotation], "Shards' own annotations stay")
	require.NoError(t, p.stop(t))

	elect.Annotations = map[string]string{"not a key": "x"}
	err = lease.Elect(context.Background(), host, elect, func(context.Context) error { return nil })
	require.ErrorIs(t, err, lease.ErrInvalidOptions)
	require.ErrorContains(t, err, `Options.Annotations: key "not a key"`)
}
