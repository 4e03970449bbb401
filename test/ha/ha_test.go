package ha_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/lease"
	fedsync "github.com/fedkit/fedkit/sync"
)

// syncer returns a Syncer of who's process for shard, whose writes go to j.
func syncer(f *fixture, p *process, j *journal, shard federation.Shard) (*fedsync.Syncer, error) {
	host := recorder{ClusterClient: p.host, j: j, who: p.who, shard: shard.Index, cluster: hostName}
	set := recordingSet{ClusterSet: p.set, j: j, who: p.who, shard: shard.Index}
	return fedsync.New(host, set, federation.DeploymentType, fedsync.Options{Namespace: f.ns, Shard: shard})
}

// leader waits until exactly one process works, one not in before, and returns it.
func leader(t *testing.T, j *journal, before ...string) string {
	t.Helper()
	var who string
	require.Eventually(t, func() bool {
		r := j.running()[0]
		require.LessOrEqual(t, len(r), 1, "two leaders at once: %v", r)
		if len(r) == 1 && !slices.Contains(before, r[0]) {
			who = r[0]
		}
		return who != ""
	}, 60*time.Second, 10*time.Millisecond, "a new leader")
	return who
}

// TestElectOnRealServers runs three processes whose Syncers run under Elect: one leads and
// propagates; killed, it hands over to another within the lease duration; cut off from its
// Lease, the next one stops before a third takes over. No two leaders work at once, every
// write falls within its writer's leadership, and every member Deployment is created once.
func TestElectOnRealServers(t *testing.T) {
	f := setup(t, "ha-elect")
	j := &journal{}
	procs := map[string]*process{}
	for _, who := range []string{"a", "b", "c"} {
		procs[who] = startProcess(t, f, who, func(ctx context.Context, p *process) error {
			return lease.Elect(ctx, p.leases, timing(f.ns, who), func(ctx context.Context) error {
				defer j.begin(who, 0)()
				s, err := syncer(f, p, j, federation.Shard{})
				if err != nil {
					return err
				}
				return s.Run(ctx)
			})
		})
	}
	first := leader(t, j)
	f.federate(t, names("web", 0, 5)...)
	f.waitPropagated(t, names("web", 0, 5)...)
	require.Len(t, j.snapshot(), 1, "one leader all along")

	// A crash: the leader stops without releasing its Lease.
	killed := time.Now()
	procs[first].kill(t)
	second := leader(t, j, first)
	handover := j.snapshot()[1].start.Sub(killed)
	t.Logf("leader %s killed; %s took over %s later (LeaseDuration 2s, RetryPeriod 250ms)", first, second, handover)
	// Within the lease duration and a retry period (2.25s) on a quiet machine. The bound is
	// five lease durations: a loaded 2-core machine delays the retries, and what this proves
	// is that a crashed leader's Lease is taken over once it expires, not how fast the
	// machine is.
	require.Less(t, handover, 10*time.Second, "a few lease durations at most")
	f.federate(t, names("web", 5, 3)...)
	f.waitPropagated(t, names("web", 5, 3)...)

	// A partition: the leader cannot reach its Lease but can still write everything else.
	// It must stop before the last process takes over.
	cut := time.Now()
	procs[second].leases.cut.Store(true)
	f.federate(t, names("web", 8, 3)...)
	third := leader(t, j, first, second)
	spans := j.snapshot()
	t.Logf("leader %s cut off from its Lease: stopped %s later; %s took over %s after that",
		second, spans[1].end.Sub(cut), third, spans[2].start.Sub(spans[1].end))
	f.waitPropagated(t, names("web", 0, 11)...)
	procs[second].leases.cut.Store(false)

	j.check(t)
	creates := j.creates(deployments)
	for _, name := range names("web", 0, 11) {
		require.Len(t, creates[federation.Key{Namespace: f.ns, Name: name}], 1, "member Deployment %s created once", name)
	}
}

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
