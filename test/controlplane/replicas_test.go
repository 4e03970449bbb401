package controlplane_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// leader waits until exactly one replica of rs, other than those in before, leads, and no
// other does meanwhile; it returns its name.
func leader(t *testing.T, rs map[string]*replica, before ...string) string {
	t.Helper()
	var who string
	waitReal(t, "a new leader", func() bool {
		var leading []string
		for name, r := range rs {
			if !slices.Contains(before, name) && r.leads() {
				leading = append(leading, name)
			}
		}
		require.LessOrEqual(t, len(leading), 1, "two leaders at once: %v", leading)
		if len(leading) == 1 {
			who = leading[0]
		}
		return who != ""
	})
	return who
}

// Three replicas of the control plane with leader election on the real host: one runs the
// loops, the others stand by. The leader crashes (stops without releasing its Lease): another
// takes over within the lease duration. The new leader is cut off from its Lease (a
// partition; it can still write everything else): it stops its loops before the last replica
// takes over. No replica writes while it does not lead, the leaders' writes never overlap in
// time, and every member object is created once, by the leader of its time.
func TestLeaderElectionOnRealServers(t *testing.T) {
	ns := fmt.Sprintf("cp-elect-%d", runs.Add(1))
	env, members := setup(t, ns)
	host, err := kube.New(env.Config(hostName), kube.Options{})
	require.NoError(t, err)
	j := &journal{}
	rs := map[string]*replica{}
	for _, who := range []string{"a", "b", "c"} {
		rs[who] = startReplica(t, env, j, who, ns, func(o *controlplane.Options) {
			l := shortLease(ns, "cp")
			o.LeaderElection = &l
		})
	}
	first := leader(t, rs)
	for name, r := range rs {
		if name != first {
			for _, l := range r.cp.Status() {
				if l.Name != controlplane.ClusterSetLoop {
					require.Equal(t, controlplane.StateStandby, l.State, "%s: %s", name, l.Name)
				}
			}
		}
	}
	batch1 := names("one", 0, 5)
	federateConfigMaps(t, host, ns, batch1...)
	waitPropagated(t, members, ns, "v1", batch1...)
	waitRecorded(t, j, ns, batch1...)

	// A crash: the leader's process stops; its Lease stays until it expires.
	killed := time.Now()
	rs[first].kill(t)
	second := leader(t, rs, first)
	t.Logf("leader %s crashed; %s took over %s later (LeaseDuration 2s, RenewDeadline 1s, RetryPeriod 250ms)", first, second, time.Since(killed))
	require.Less(t, time.Since(killed), 4*time.Second, "the lease duration, give or take the retry periods")
	batch2 := names("two", 0, 5)
	federateConfigMaps(t, host, ns, batch2...)
	waitPropagated(t, members, ns, "v1", batch2...)
	waitRecorded(t, j, ns, batch2...)

	// A partition: the leader cannot reach its Lease. It must stop before the third takes over.
	cut := time.Now()
	rs[second].host.cut.Store(true)
	stopped := waitReal(t, second+" stops its loops", func() bool { return !rs[second].leads() })
	third := leader(t, rs, first, second)
	t.Logf("leader %s cut off from its Lease: stopped its loops %s later; %s took over %s after the cut", second, stopped, third, time.Since(cut))
	rs[second].host.cut.Store(false)
	batch3 := names("three", 0, 5)
	federateConfigMaps(t, host, ns, batch3...)
	waitPropagated(t, members, ns, "v1", batch3...)
	waitRecorded(t, j, ns, batch3...)
	require.False(t, rs[second].leads(), "%s leads again", second)

	writes := j.check(t)
	span := map[string][2]time.Time{}
	for _, w := range writes {
		s, ok := span[w.who]
		if !ok || w.start.Before(s[0]) {
			s[0] = w.start
		}
		if w.end.After(s[1]) {
			s[1] = w.end
		}
		span[w.who] = s
	}
	order := []string{first, second, third}
	for i := 1; i < len(order); i++ {
		prev, next := span[order[i-1]], span[order[i]]
		require.True(t, prev[1].Before(next[0]), "%s wrote until %s, %s from %s", order[i-1], prev[1].Format("15:04:05.000"), order[i], next[0].Format("15:04:05.000"))
	}
	for i, batch := range [][]string{batch1, batch2, batch3} {
		for _, name := range batch {
			for _, m := range memberNames {
				require.Equal(t, []string{order[i]}, j.creators(m, ns, name), "creators of %s in %s", name, m)
			}
		}
	}
	t.Logf("%d writes checked: %s wrote %s-%s, %s %s-%s, %s from %s", len(writes),
		first, stamp(span[first][0]), stamp(span[first][1]), second, stamp(span[second][0]), stamp(span[second][1]), third, stamp(span[third][0]))
}

// Three replicas claim 6 shards through Leases on the real host and run one set of loops per
// shard they hold: the shards spread 2/2/2 and 30 FederatedConfigMaps are each propagated by
// exactly one replica, the one running the shard that owns it. One replica crashes: its
// shards move to the two others, which keep reconciling its objects (an edit propagates).
func TestShardingOnRealServers(t *testing.T) {
	const count = 6
	ns := fmt.Sprintf("cp-shards-%d", runs.Add(1))
	env, members := setup(t, ns)
	host, err := kube.New(env.Config(hostName), kube.Options{})
	require.NoError(t, err)
	j := &journal{}
	rs := map[string]*replica{}
	for _, who := range []string{"a", "b", "c"} {
		rs[who] = startReplica(t, env, j, who, ns, func(o *controlplane.Options) {
			o.Sharding = &controlplane.Sharding{Count: count, Lease: shortLease(ns, "cp")}
		})
	}
	spread := func(want map[string]int) func() bool {
		return func() bool {
			seen := map[int]string{}
			for name, r := range rs {
				held := r.shards()
				for _, i := range held {
					require.NotContains(t, seen, i, "shard %d runs in %s and %s at once", i, seen[i], name)
					seen[i] = name
				}
				if len(held) != want[name] {
					return false
				}
			}
			return len(seen) == count
		}
	}
	took := waitReal(t, "6 shards spread 2/2/2", spread(map[string]int{"a": 2, "b": 2, "c": 2}))
	t.Logf("6 shards spread over 3 replicas %s after they started", took)
	objects := names("cfg", 0, 30)
	federateConfigMaps(t, host, ns, objects...)
	waitPropagated(t, members, ns, "v1", objects...)

	waitRecorded(t, j, ns, objects...)

	// Each member ConfigMap was created once, by a replica that ran its shard then (the
	// journal checks that of every write).
	perReplica := map[string]int{}
	for _, name := range objects {
		for _, m := range memberNames {
			who := j.creators(m, ns, name)
			require.Len(t, who, 1, "creators of %s in %s: %v", name, m, who)
			perReplica[who[0]]++
		}
	}
	t.Logf("member ConfigMaps created per replica: %v", perReplica)

	// a crashes: its Leases expire, and b and c take one of its shards each.
	held := rs["a"].shards()
	ofA := slices.DeleteFunc(slices.Clone(objects), func(n string) bool {
		return !slices.Contains(held, federation.ShardOf(federation.Key{Namespace: ns, Name: n}, count))
	})
	require.NotEmpty(t, ofA, "none of the objects in a's shards %v", held)
	killed := time.Now()
	rs["a"].kill(t)
	delete(rs, "a")
	waitReal(t, "a's shards moved to b and c", spread(map[string]int{"b": 3, "c": 3}))
	t.Logf("a crashed; its shards moved to b and c %s later (LeaseDuration 2s, RetryPeriod 250ms)", time.Since(killed))

	edited := ofA[0]
	u, err := host.Get(context.Background(), fedConfigMaps, ns, edited)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, "v2", "spec", "template", "data", "value"))
	_, err = host.Update(context.Background(), fedConfigMaps, u)
	require.NoError(t, err)
	waitPropagated(t, members, ns, "v2", edited)
	t.Logf("%s (shard %d, a's) edited after the crash: propagated", edited, federation.ShardOf(federation.Key{Namespace: ns, Name: edited}, count))
	t.Logf("%d writes checked against the shards their replica ran", len(j.check(t)))
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }
