package controlplane_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/lease"
)

// Two replicas with leader election: one runs every loop, the other stands by and writes
// nothing. The leader crashes (its Run stops without releasing the Lease): the other takes
// over within the lease duration and propagates what comes next. No write is made by a
// replica that was not leading when it started it.
func TestLeaderElectionOneReplicaRuns(t *testing.T) {
	noLeaks(t)
	e := newEnv(t)
	j := newJournal()
	withElection := func(o *controlplane.Options) {
		le := fastLease()
		o.LeaderElection = &le
	}
	a := e.replica(t, j, "a", withElection)
	b := e.replica(t, j, "b", withElection)
	a.start(t)
	realEventually(t, "a leads", a.leads)
	b.start(t)
	realEventually(t, "b stands by", func() bool {
		for _, l := range b.cp.Status() {
			if l.State != controlplane.StateStandby {
				return false
			}
		}
		return true
	})

	create(t, e.host, deployments, federatedDeployment("web"))
	stepUntil(t, e.clock, time.Second, "web propagated by a", func() bool {
		return e.memberReplicas("eu", "web") == 4 && e.memberReplicas("us", "web") == 4 && j.recorded("web")
	})
	require.False(t, b.leads(), "b leads while a does")

	// A crash: a's Run stops, its Lease stays until it expires.
	require.NoError(t, a.stop())
	took := realEventually(t, "b takes over", b.leads)
	t.Logf("a crashed; b took over %s later (LeaseDuration 2s, RetryPeriod 250ms)", took)
	require.Less(t, took, 4*time.Second, "within the lease duration, give or take the retry periods")

	create(t, e.host, deployments, federatedDeployment("api"))
	stepUntil(t, e.clock, time.Second, "api propagated by b", func() bool {
		return e.memberReplicas("eu", "api") == 4 && e.memberReplicas("us", "api") == 4 && j.recorded("api")
	})
	for _, m := range []string{"eu", "us"} {
		require.Equal(t, []string{"a"}, j.creators(m, "web"), "%s: creators of web", m)
		require.Equal(t, []string{"b"}, j.creators(m, "api"), "%s: creators of api", m)
	}
	j.check(t)
}

// Three replicas claim 6 shards through Leases and run one set of loops per shard held: the
// shards spread 2/2/2, every object is propagated once, by the replica holding its shard.
// One replica crashes: its shards move to the two others (3/3), which keep reconciling its
// objects (an edit to one propagates) and propagate new ones.
func TestShardingSplitsTheKeys(t *testing.T) {
	noLeaks(t)
	const count = 6
	e := newEnv(t)
	j := newJournal()
	withShards := func(o *controlplane.Options) {
		o.Sharding = &controlplane.Sharding{Count: count, Lease: fastLease()}
	}
	replicas := map[string]*replica{}
	for _, name := range []string{"a", "b", "c"} {
		replicas[name] = e.replica(t, j, name, withShards)
	}
	for _, r := range replicas {
		r.start(t)
	}
	spread := func(want map[string]int) func() bool {
		return func() bool {
			seen := map[int]string{}
			for name, r := range replicas {
				if want[name] == 0 {
					continue
				}
				held := r.shards()
				if len(held) != want[name] {
					return false
				}
				for _, i := range held {
					if other, ok := seen[i]; ok {
						t.Fatalf("shard %d runs in %s and %s at once", i, other, name)
					}
					seen[i] = name
				}
			}
			return len(seen) == count
		}
	}
	took := realEventually(t, "shards spread 2/2/2", spread(map[string]int{"a": 2, "b": 2, "c": 2}))
	t.Logf("6 shards spread over 3 replicas in %s", took)

	var names []string
	for i := range 18 {
		names = append(names, fmt.Sprintf("app-%d", i))
		create(t, e.host, deployments, federatedDeployment(names[i]))
	}
	stepUntil(t, e.clock, time.Second, "every object propagated", func() bool {
		for _, n := range names {
			if e.memberReplicas("eu", n) != 4 || e.memberReplicas("us", n) != 4 || !j.recorded(n) {
				return false
			}
		}
		return true
	})
	// Each member object was created once, by a replica that ran its shard then (the
	// journal checks that of every write). Shards may have moved since, under load.
	byReplica := map[string]int{}
	for _, n := range names {
		for _, m := range []string{"eu", "us"} {
			who := j.creators(m, n)
			require.Len(t, who, 1, "%s: creators of %s; writes:\n%s", m, n, strings.Join(j.about("default/"+n+" "), "\n"))
			byReplica[who[0]]++
		}
	}
	t.Logf("member objects created per replica: %v", byReplica)

	// a crashes: its Leases expire and b and c take one of its shards each.
	held := replicas["a"].shards()
	ofA := slices.IndexFunc(names, func(n string) bool {
		return slices.Contains(held, federation.ShardOf(federation.Key{Namespace: "default", Name: n}, count))
	})
	require.NotEqual(t, -1, ofA, "none of 18 objects in a's shards %v", held)
	require.NoError(t, replicas["a"].stop())
	took = realEventually(t, "a's shards moved to b and c", spread(map[string]int{"b": 3, "c": 3}))
	t.Logf("a crashed; its shards moved to b and c %s later (LeaseDuration 2s, RetryPeriod 250ms)", took)

	u, err := e.host.Get(context.Background(), deployments, "default", names[ofA])
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, int64(6), "spec", "template", "spec", "replicas"))
	_, err = e.host.Update(context.Background(), deployments, u)
	require.NoError(t, err)
	create(t, e.host, deployments, federatedDeployment("late"))
	stepUntil(t, e.clock, time.Second, names[ofA]+" edited and late created in the members", func() bool {
		return e.memberReplicas("eu", names[ofA]) == 6 && e.memberReplicas("us", names[ofA]) == 6 && e.memberReplicas("eu", "late") == 4
	})
	j.check(t)
}

// Two replicas hold 3 shards each; a third joins but cannot list the Leases yet (it is
// still starting). It renews its presence, yet the two keep every shard until it is ready to
// take some: an edit of every object propagates meanwhile. Once it sees the Leases, the
// shards spread 2/2/2 and every object is still reconciled by the replica holding its shard.
func TestShardingHandsOverOnlyToAReadyReplica(t *testing.T) {
	noLeaks(t)
	const count = 6
	e := newEnv(t)
	j := newJournal()
	replicas := map[string]*replica{}
	for _, name := range []string{"a", "b", "c"} {
		replicas[name] = e.replica(t, j, name, func(o *controlplane.Options) {
			l := fastLease()
			l.Identity = name
			o.Sharding = &controlplane.Sharding{Count: count, Lease: l}
		})
	}
	spread := func(want map[string]int) func() bool {
		return func() bool {
			got, n := map[string]int{}, 0
			for name, r := range replicas {
				if held := len(r.shards()); held > 0 {
					got[name] = held
					n += held
				}
			}
			return n == count && maps.Equal(got, want)
		}
	}
	replicas["a"].start(t)
	replicas["b"].start(t)
	realEventually(t, "shards spread 3/3", spread(map[string]int{"a": 3, "b": 3}))
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("app-%d", i))
		create(t, e.host, deployments, federatedDeployment(names[i]))
	}
	propagated := func(replicas int64) func() bool {
		return func() bool {
			for _, n := range names {
				if e.memberReplicas("eu", n) != replicas || e.memberReplicas("us", n) != replicas {
					return false
				}
			}
			return true
		}
	}
	stepUntil(t, e.clock, time.Second, "every object propagated", propagated(4))

	// c joins, blind to the Leases: its presence Lease is renewed many times over, every
	// round of a and b sees it, and they keep their shards.
	replicas["c"].blindLeases.Store(true)
	replicas["c"].start(t)
	renewals := 0
	var rv string
	realEventually(t, "c's presence renewed 8 times", func() bool {
		list, err := e.host.List(context.Background(), leasesGVR, "default", metav1.ListOptions{LabelSelector: lease.RoleLabel + "=member"})
		require.NoError(t, err)
		for _, u := range list.Items {
			if h, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity"); h == "c" && u.GetResourceVersion() != rv {
				rv = u.GetResourceVersion()
				renewals++
			}
		}
		return renewals >= 8
	})
	edit := func(replicas int64) {
		for _, n := range names {
			u, err := e.host.Get(context.Background(), deployments, "default", n)
			require.NoError(t, err)
			require.NoError(t, unstructured.SetNestedField(u.Object, replicas, "spec", "template", "spec", "replicas"))
			_, err = e.host.Update(context.Background(), deployments, u)
			require.NoError(t, err)
		}
	}
	edit(6)
	stepUntilf(t, e.clock, time.Second, func() string {
		return fmt.Sprintf("every edit propagated while c cannot list the Leases; shards held: a %v, b %v, c %v",
			replicas["a"].shards(), replicas["b"].shards(), replicas["c"].shards())
	}, propagated(6))
	// c holds nothing: a and b hand it no shard before it is ready. Under heavy load a or b
	// may miss a renewal of these real-time Leases and drop a shard for a moment; the other
	// takes it back, never c.
	require.Empty(t, replicas["c"].shards(), "a and b hand no shard to c before it is ready: a %v, b %v",
		replicas["a"].shards(), replicas["b"].shards())
	if !spreadWithin(spread(map[string]int{"a": 3, "b": 3}), time.Minute) {
		t.Fatalf("shards spread 3/3 while c is blind: a %v, b %v, c %v; leases: %s", replicas["a"].shards(), replicas["b"].shards(), replicas["c"].shards(), leaseHolders(t, e.host))
	}

	// c sees the Leases: it says it wants 2 shards, and gets one from each.
	replicas["c"].blindLeases.Store(false)
	realEventually(t, "shards spread 2/2/2", spread(map[string]int{"a": 2, "b": 2, "c": 2}))
	edit(8)
	stepUntil(t, e.clock, time.Second, "every edit propagated after the spread", propagated(8))
	j.check(t)
}

// A static shard (a StatefulSet's ordinal) needs no Lease: two replicas with Shard 0/2 and
// 1/2 split the objects, each propagated by its shard's replica only.
func TestStaticShards(t *testing.T) {
	noLeaks(t)
	e := newEnv(t)
	j := newJournal()
	rs := []*replica{
		e.replica(t, j, "0", func(o *controlplane.Options) { o.Shard = federation.Shard{Index: 0, Count: 2} }),
		e.replica(t, j, "1", func(o *controlplane.Options) { o.Shard = federation.Shard{Index: 1, Count: 2} }),
	}
	for _, r := range rs {
		r.start(t)
	}
	var names []string
	for i := range 8 {
		names = append(names, fmt.Sprintf("app-%d", i))
		create(t, e.host, deployments, federatedDeployment(names[i]))
	}
	stepUntil(t, e.clock, time.Second, "every object propagated", func() bool {
		for _, n := range names {
			if e.memberReplicas("us", n) != 4 || !j.recorded(n) {
				return false
			}
		}
		return true
	})
	for _, n := range names {
		want := []string{fmt.Sprint(federation.ShardOf(federation.Key{Namespace: "default", Name: n}, 2))}
		if diff := cmp.Diff(want, j.creators("us", n)); diff != "" {
			t.Errorf("creators of %s (-want +got):\n%s", n, diff)
		}
	}
	for _, l := range rs[1].cp.Status() {
		require.Equal(t, federation.Shard{Index: 1, Count: 2}, l.Shard, l.Name)
	}
	j.check(t)
	require.Empty(t, leaseNames(t, e.host), "Leases on the host")
}

// leaseNames returns the names of the Leases on the host.
func leaseNames(t *testing.T, host *fake.Cluster) []string {
	t.Helper()
	var out []string
	for _, u := range host.Objects(leasesGVR) {
		out = append(out, u.GetName())
	}
	return out
}

// noLeaks checks, once the test and its cleanups (the replicas' stops) are done, that no
// goroutine is left behind.
func noLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

func TestNewReplicaOptions(t *testing.T) {
	host, fleet := fake.NewHost("host"), fake.NewFleet()
	le := func(mod func(*controlplane.Lease)) *controlplane.Lease {
		l := fastLease()
		mod(&l)
		return &l
	}
	for _, tt := range []struct {
		name string
		opts controlplane.Options
		want []error
		has  string
	}{
		{name: "election and sharding", opts: controlplane.Options{LeaderElection: &controlplane.Lease{}, Sharding: &controlplane.Sharding{Count: 2}},
			has: "LeaderElection and Sharding are both set"},
		{name: "static and claimed shards", opts: controlplane.Options{Shard: federation.Shard{Index: 1, Count: 2}, Sharding: &controlplane.Sharding{Count: 2}},
			has: "Options.Shard 1/2 and Options.Sharding are both set"},
		{name: "a shard out of range", opts: controlplane.Options{Shard: federation.Shard{Index: 2, Count: 2}},
			want: []error{federation.ErrInvalidShard}, has: "Shard: "},
		{name: "a loop's own shard", opts: func() controlplane.Options {
			o := controlplane.Options{}
			o.Sync.Shard = federation.Shard{Index: 1, Count: 2}
			return o
		}(), has: "Sync.Shard is set"},
		{name: "no shard count", opts: controlplane.Options{Sharding: &controlplane.Sharding{}}, has: "Count must be at least 1"},
		{name: "a lease duration in fractions of seconds", opts: controlplane.Options{LeaderElection: le(func(l *controlplane.Lease) { l.LeaseDuration = 1500 * time.Millisecond })},
			has: "LeaseDuration must be a whole number of seconds"},
		{name: "a renew deadline past the lease duration", opts: controlplane.Options{LeaderElection: le(func(l *controlplane.Lease) { l.RenewDeadline = 2 * time.Second })},
			has: "RenewDeadline must be positive and less than LeaseDuration"},
		{name: "a name that is no Lease name", opts: controlplane.Options{LeaderElection: le(func(l *controlplane.Lease) { l.Name = "Fed_Kit" })},
			has: `Name "Fed_Kit" does not make valid Lease names`},
		{name: "an identity that makes no Lease name", opts: controlplane.Options{Identity: "Blue_Team", Sharding: &controlplane.Sharding{Count: 2}},
			has: `Name "Blue_Team-shard"`},
		{name: "a bad namespace", opts: controlplane.Options{LeaderElection: le(func(l *controlplane.Lease) { l.Namespace = "a.b" })},
			has: `Namespace "a.b"`},
		{name: "a loop's bad option fails in New with sharding too", opts: func() controlplane.Options {
			o := controlplane.Options{Types: []federation.TypeConfig{jobs}, Sharding: &controlplane.Sharding{Count: 3}}
			o.Sync.Conflict = "Steal"
			return o
		}(), has: "sync for FederatedJob"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := controlplane.New(host, fleet, tt.opts)
			require.Error(t, err)
			for _, want := range tt.want {
				require.ErrorIs(t, err, want)
			}
			if tt.has != "sync for FederatedJob" {
				require.ErrorIs(t, err, controlplane.ErrInvalidOptions)
			}
			require.ErrorContains(t, err, tt.has)
		})
	}

	// New completes copies: the embedder's Lease is not written.
	l := controlplane.Lease{}
	_, err := controlplane.New(host, fleet, controlplane.Options{LeaderElection: &l})
	require.NoError(t, err)
	require.Equal(t, controlplane.Lease{}, l)
}

// The Leases' default names follow Options.Identity, so control planes managing different
// objects do not exclude each other; with a static shard, each shard elects its own leader.
func TestLeaseNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts controlplane.Options
		want []string
	}{
		{name: "election", opts: controlplane.Options{LeaderElection: &controlplane.Lease{}}, want: []string{"fedkit-controlplane"}},
		{name: "another control plane", opts: controlplane.Options{Identity: "blue", LeaderElection: &controlplane.Lease{}}, want: []string{"blue-controlplane"}},
		{name: "election in a static shard", opts: controlplane.Options{Shard: federation.Shard{Index: 1, Count: 2}, LeaderElection: &controlplane.Lease{}},
			want: []string{"fedkit-controlplane-1"}},
		{name: "a named election in a static shard", opts: controlplane.Options{Shard: federation.Shard{Index: 1, Count: 2}, LeaderElection: &controlplane.Lease{Name: "east"}},
			want: []string{"east-1"}},
		{name: "sharding", opts: controlplane.Options{Sharding: &controlplane.Sharding{Count: 2}}, want: []string{"fedkit-shard-0", "fedkit-shard-1", "fedkit-shard-member-"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			e := newEnv(t)
			opts := e.options()
			opts.Disable = controlplane.Parts{DNS: true, Monitor: true, ClusterSet: true}
			opts.Identity, opts.Shard = tt.opts.Identity, tt.opts.Shard
			if l := tt.opts.LeaderElection; l != nil {
				c := *l
				f := fastLease()
				c.Namespace, c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = f.Namespace, f.LeaseDuration, f.RenewDeadline, f.RetryPeriod
				opts.LeaderElection = &c
			}
			if s := tt.opts.Sharding; s != nil {
				opts.Sharding = &controlplane.Sharding{Count: s.Count, Lease: fastLease()}
			}
			cp, err := controlplane.New(e.host, e.fleet, opts)
			require.NoError(t, err)
			stop := run(cp)
			var got []string
			realEventually(t, "the Leases on the host", func() bool {
				got = leaseNames(t, e.host)
				return len(got) == len(tt.want)
			})
			require.NoError(t, stop())
			slices.Sort(got)
			for i, want := range tt.want {
				require.True(t, strings.HasPrefix(got[i], want), "Leases %v; want %v", got, tt.want)
			}
		})
	}
}

// A host without fedkit's CRDs runs nothing, with replicas as without: the leader (or the
// replica holding a shard) finds every loop failed, stops, and Run returns the reasons.
func TestRunFailsWhenNothingCanRunWithReplicas(t *testing.T) {
	for _, tt := range []struct {
		name string
		with func(*controlplane.Options)
		has  string
	}{
		{name: "leader election", with: func(o *controlplane.Options) {
			l := fastLease()
			o.LeaderElection = &l
		}},
		{name: "sharding", with: func(o *controlplane.Options) {
			o.Sharding = &controlplane.Sharding{Count: 2, Lease: fastLease()}
		}, has: "shard "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			host := fake.NewCluster("not-a-host") // serves Leases, not fedkit's resources
			opts := controlplane.Options{Types: []federation.TypeConfig{federation.DeploymentType}, Disable: controlplane.Parts{ClusterSet: true, DNS: true}}
			tt.with(&opts)
			cp, err := controlplane.New(host, fake.NewFleet(), opts)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = cp.Run(ctx)
			require.ErrorIs(t, err, controlplane.ErrAllFailed)
			require.ErrorIs(t, err, controlplane.ErrNotServed)
			require.ErrorContains(t, err, "sync/FederatedDeployment: ")
			require.ErrorContains(t, err, tt.has)
			require.NoError(t, ctx.Err(), "Run returned by itself")
		})
	}
}

// spreadWithin polls cond in real time (the Leases renew on the wall clock) for at most d.
func spreadWithin(cond func() bool, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// leaseHolders describes the group's Leases: name, holder, renewTime.
func leaseHolders(t *testing.T, host federation.ClusterClient) string {
	list, err := host.List(context.Background(), leasesGVR, "default", metav1.ListOptions{})
	require.NoError(t, err)
	var out []string
	for _, u := range list.Items {
		h, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
		r, _, _ := unstructured.NestedString(u.Object, "spec", "renewTime")
		out = append(out, fmt.Sprintf("%s=%s@%s", u.GetName(), h, r))
	}
	return strings.Join(out, " ")
}
