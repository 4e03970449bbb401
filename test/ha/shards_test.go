package ha_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/lease"
)

// spread returns how many shards each process works on now, and fails if one shard runs in
// two processes.
func spread(t *testing.T, j *journal) (map[string]int, int) {
	t.Helper()
	out, total := map[string]int{}, 0
	for shard, who := range j.running() {
		require.LessOrEqual(t, len(who), 1, "shard %d runs in %v at once", shard, who)
		out[who[0]]++
		total++
	}
	return out, total
}

// waitSpread waits until all count shards run, want[who] of them in who.
func waitSpread(t *testing.T, j *journal, count int, want map[string]int) {
	t.Helper()
	var got map[string]int
	require.Eventually(t, func() bool {
		var total int
		got, total = spread(t, j)
		if total != count || len(got) != len(want) {
			return false
		}
		for who, n := range want {
			if got[who] != n {
				return false
			}
		}
		return true
	}, 60*time.Second, 10*time.Millisecond, "shards per process: got %v; want %v", got, want)
}

// TestShardsOnRealServers runs three processes that claim 4 shards under Shards, a Syncer
// per shard held: the shards spread 2/1/1, every federated object is propagated by the
// shard that owns it and by no other, and killing the process with two shards moves them to
// the two others, which then propagate what those shards own.
func TestShardsOnRealServers(t *testing.T) {
	const count = 4
	f := setup(t, "ha-shards")
	j := &journal{}
	procs := map[string]*process{}
	for _, who := range []string{"a", "b", "c"} {
		procs[who] = startProcess(t, f, who, func(ctx context.Context, p *process) error {
			opts := timing(f.ns, who)
			opts.Count = count
			return lease.Shards(ctx, p.leases, opts, func(ctx context.Context, shard federation.Shard) error {
				defer j.begin(who, shard.Index)()
				s, err := syncer(f, p, j, shard)
				if err != nil {
					return err
				}
				return s.Run(ctx)
			})
		})
	}
	// Identities sorted: a has rank 0 and gets the one shard 4 mod 3 leaves over.
	waitSpread(t, j, count, map[string]int{"a": 2, "b": 1, "c": 1})
	objects := names("app", 0, 16)
	f.federate(t, objects...)
	f.waitPropagated(t, objects...)

	// a crashes: its two shards' Leases expire and b and c take one each.
	killed := time.Now()
	procs["a"].kill(t)
	waitSpread(t, j, count, map[string]int{"b": 2, "c": 2})
	moved := lastStart(j.snapshot()).Sub(killed)
	t.Logf("a killed; its shards taken over by b and c %s later (LeaseDuration 2s, RetryPeriod 250ms)", moved)
	require.Less(t, moved, 4*time.Second, "the lease duration, the retry periods, and a look at the presence Leases")
	more := names("app", 16, 8)
	f.federate(t, more...)
	f.waitPropagated(t, more...)

	j.check(t)
	owners := map[int]int{}
	for key, creates := range j.creates(deployments) {
		require.Len(t, creates, 1, "member Deployment %s created once", key)
		want := federation.ShardOf(key, count)
		require.Equal(t, want, creates[0].shard, "member Deployment %s created by shard %d; its owner is %d", key, creates[0].shard, want)
		owners[want]++
	}
	require.Len(t, owners, count, "the objects fell in every shard: %v", owners)
	t.Logf("objects per shard: %v; intervals: %d", owners, len(j.snapshot()))
}
