package status_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// aggregateFixture is objects federated objects of clusters clusters each, with the status
// the Collector wrote from them at t0 (by Aggregate itself, so that every observed field is as
// a real pass leaves it), and the members' state for a pass at t0+30s. Inputs are built for
// 100 distinct objects and cycled (Aggregate never modifies them), so the fixture stays small.
func aggregateFixture(clusters int, change func(obj, cluster int) (status.Member, bool)) []status.Input {
	const distinct = 100
	now := t0.Add(30 * time.Second)
	inputs := make([]status.Input, distinct)
	for o := range distinct {
		listed := propagatedAt(&federation.FederatedStatus{Clusters: make([]federation.MemberStatus, clusters)}, 1)
		before := make([]status.Member, clusters)
		members := make([]status.Member, clusters)
		for c := range clusters {
			n := int64(1 + (o+c)%5)
			listed.Clusters[c] = federation.MemberStatus{Name: fmt.Sprintf("cluster-%03d", c), Revision: 3}
			before[c] = fresh(deploy(n), t0)
			members[c] = fresh(deploy(n), now)
			if m, ok := change(o, c); ok {
				members[c] = m
			}
		}
		first := status.Aggregate(status.Input{Generation: 1, Status: listed, Members: before, Now: t0, StaleAfter: staleAfter})
		st := propagatedAt(&federation.FederatedStatus{Clusters: first.Clusters, Aggregated: first.Aggregated, Conditions: []metav1.Condition{first.Ready}}, 1)
		inputs[o] = status.Input{Generation: 1, Status: st, Members: members, Now: now, StaleAfter: staleAfter}
	}
	return inputs
}

// BenchmarkAggregate is one aggregation pass over 10,000 objects placed in 100 clusters
// each: the pure decision of a whole resync, without I/O. "steady" is the usual case (nothing
// changed: no write); "one-changed" has one cluster per object report a new count; "stale"
// has a third of the clusters cut off.
func BenchmarkAggregate(b *testing.B) {
	const objects, clusters = 10000, 100
	for _, bc := range []struct {
		name   string
		change func(o, c int) (status.Member, bool)
		writes int // objects whose status a pass changes
	}{
		{"steady", func(int, int) (status.Member, bool) { return status.Member{}, false }, 0},
		{"one-changed", func(o, c int) (status.Member, bool) {
			return fresh(deploy(7), t0.Add(30*time.Second)), c == o%clusters
		}, objects},
		{"stale", func(_, c int) (status.Member, bool) { return status.Member{ClusterReady: false}, c%3 == 0 }, objects},
	} {
		b.Run(bc.name, func(b *testing.B) {
			inputs := aggregateFixture(clusters, bc.change)
			b.ReportAllocs()
			changed := 0
			for b.Loop() {
				changed = 0
				for i := range objects {
					if status.Aggregate(inputs[i%len(inputs)]).Changed {
						changed++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/objects, "ns/object")
			b.ReportMetric(float64(changed), "writes/pass")
			require.Equal(b, bc.writes, changed, "objects whose status changed in one pass")
		})
	}
}

// BenchmarkCollectorReconcile is one Collector pass over one object placed in 100 fake
// clusters when nothing changed: "live" reads each member with a Get, "cached" through the
// fleet's member caches (federation.MemberCache), as Run does with kube.ClusterSet.
func BenchmarkCollectorReconcile(b *testing.B) {
	names := make([]string, 100)
	replicas := make([]int64, 100)
	for i := range names {
		names[i], replicas[i] = fmt.Sprintf("c%03d", i), 2
	}
	for _, cached := range []bool{false, true} {
		b.Run(map[bool]string{false: "live", true: "cached"}[cached], func(b *testing.B) {
			e := newEnv(b, status.Options{}, names...)
			if cached {
				c, err := status.New(e.host, e.fleet, federation.DeploymentType, status.Options{Clock: e.clock})
				require.NoError(b, err)
				e.c = c
			}
			e.federate(b, names, replicas)
			e.reconcile(b)
			e.writes()
			b.ReportAllocs()
			for b.Loop() {
				e.reconcile(b)
			}
			require.Zero(b, e.writes(), "nothing changed")
		})
	}
}

// BenchmarkProbeRound is one ClusterMonitor round over 1,000 fake clusters: one Reconcile
// each. "steady" probes healthy clusters between heartbeats (no writes); "heartbeat" steps a
// minute between rounds, so every cluster's version, nodes and pods are read again and its
// heartbeat written.
func BenchmarkProbeRound(b *testing.B) {
	const clusters = 1000
	for _, bc := range []struct {
		name   string
		step   time.Duration
		writes int // Cluster writes per round
	}{{"steady", 10 * time.Second, 0}, {"heartbeat", time.Minute, clusters}} {
		b.Run(bc.name, func(b *testing.B) {
			host := newHost(b)
			fleet := fake.NewFleet()
			clk := clocktesting.NewFakeClock(t0)
			fleet.SetClock(clk)
			names := make([]string, clusters)
			for i := range names {
				names[i] = fmt.Sprintf("c%04d", i)
				fleet.Add(names[i], map[string]string{federation.RegionLabel: "r", federation.ZoneLabel: fmt.Sprintf("z%d", i%3)})
			}
			require.NoError(b, fleet.Register(ctx, host))
			m, err := status.NewClusterMonitor(host, fleet, status.MonitorOptions{Clock: clk})
			require.NoError(b, err)
			roundOnce := func() {
				for _, n := range names {
					if _, err := m.Reconcile(ctx, federation.Key{Name: n}); err != nil {
						b.Fatal(err)
					}
				}
			}
			roundOnce()
			host.ClearActions()
			b.ReportAllocs()
			rounds := 0
			for b.Loop() {
				clk.Step(bc.step)
				roundOnce()
				rounds++
			}
			writes := 0
			for _, a := range host.Actions() {
				if a.Verb == fake.VerbUpdateStatus || a.Verb == fake.VerbUpdate {
					writes++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/clusters, "ns/cluster")
			b.ReportMetric(float64(writes)/float64(rounds), "writes/round")
			require.Equal(b, bc.writes*rounds, writes, "Cluster writes in %d rounds", rounds)
		})
	}
}
