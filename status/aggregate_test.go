package status_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const staleAfter = 90 * time.Second

func i64(n int64) *int64 { return &n }

func ptr[T any](v T) *T { return &v }

func mtime(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

// deploy is a ready Deployment's observation with n replicas.
func deploy(n int64) *status.Observation {
	return &status.Observation{Replicas: i64(n), ReadyReplicas: i64(n), AvailableReplicas: i64(n), UpdatedReplicas: i64(n), ObservedGeneration: i64(1), Ready: true, Revision: 3}
}

// propagatedAt returns st as sync writes it once generation gen runs at revision 3 (entry's
// and deploy's) in every placed cluster: status.observedGeneration, syncedRevision and a
// Propagated condition.
func propagatedAt(st *federation.FederatedStatus, gen int64) *federation.FederatedStatus {
	st.ObservedGeneration, st.SyncedRevision = gen, 3
	st.Conditions = append(st.Conditions, metav1.Condition{Type: federation.ConditionPropagated, Status: metav1.ConditionTrue,
		Reason: "Propagated", ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(t0)})
	return st
}

// entry is a status.clusters[] entry as the Collector wrote it from deploy(n) at t.
func entry(name string, n int64, at time.Time, stale bool) federation.MemberStatus {
	return federation.MemberStatus{Name: name, Revision: 3, Replicas: i64(n), ReadyReplicas: i64(n), AvailableReplicas: i64(n),
		UpdatedReplicas: i64(n), ObservedGeneration: i64(1), LastObserved: mtime(at), Stale: stale}
}

func fresh(o *status.Observation, at time.Time) status.Member {
	return status.Member{ClusterReady: true, LastRead: at, Observation: o}
}

func readyCond(s metav1.ConditionStatus, reason string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: federation.ConditionReady, Status: s, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
}

func TestAggregateQuorum(t *testing.T) {
	lastGood := &federation.AggregatedStatus{Replicas: 9, ReadyReplicas: 9, AvailableReplicas: 9, UpdatedReplicas: 9, Clusters: 3}
	placed := []federation.MemberStatus{entry("a", 3, t0, false), entry("b", 3, t0, false), entry("c", 3, t0, false)}
	now := t0.Add(time.Minute)
	tests := []struct {
		name     string
		clusters []federation.MemberStatus
		members  []status.Member
		prev     *federation.AggregatedStatus
		wantAgg  *federation.AggregatedStatus
		wantCond metav1.ConditionStatus
		reason   string
		message  string
		stale    []bool
	}{{
		name:     "3 placed, all fresh: the sum",
		clusters: placed,
		members:  []status.Member{fresh(deploy(4), now), fresh(deploy(3), now), fresh(deploy(2), now)},
		prev:     lastGood,
		wantAgg:  &federation.AggregatedStatus{Replicas: 9, ReadyReplicas: 9, AvailableReplicas: 9, UpdatedReplicas: 9, Clusters: 3},
		wantCond: metav1.ConditionTrue, reason: status.ReasonReady, message: "ready in 3 of 3 placed clusters",
		stale: []bool{false, false, false},
	}, {
		name:     "3 placed, 2 fresh: the sum of the two, the stale one left out",
		clusters: []federation.MemberStatus{entry("a", 3, t0, false), entry("b", 3, t0, false), entry("c", 50, t0, false)},
		members:  []status.Member{fresh(deploy(4), now), fresh(deploy(4), now), {ClusterReady: false, LastRead: now, Observation: deploy(50)}},
		prev:     lastGood,
		wantAgg:  &federation.AggregatedStatus{Replicas: 8, ReadyReplicas: 8, AvailableReplicas: 8, UpdatedReplicas: 8, Clusters: 2, StaleClusters: 1},
		wantCond: metav1.ConditionFalse, reason: status.ReasonStale, message: "ready in 2 of 3 placed clusters; no fresh data from: c",
		stale: []bool{false, false, true},
	}, {
		name:     "3 placed, 1 fresh: no quorum, the last good values stay",
		clusters: placed,
		members:  []status.Member{fresh(deploy(1), now), {ClusterReady: false}, {ClusterReady: true, LastRead: now.Add(-staleAfter - time.Second), Observation: deploy(3)}},
		prev:     lastGood,
		wantAgg:  &federation.AggregatedStatus{Replicas: 9, ReadyReplicas: 9, AvailableReplicas: 9, UpdatedReplicas: 9, Clusters: 3, StaleClusters: 2},
		wantCond: metav1.ConditionUnknown, reason: status.ReasonNoQuorum,
		message: "fresh data from 1 of 3 placed clusters, not a majority: status.aggregated keeps its last values; no fresh data from: b, c",
		stale:   []bool{false, true, true},
	}, {
		name:     "no quorum before any good value: no sums, only the stale count",
		clusters: placed,
		members:  []status.Member{fresh(deploy(1), now)},
		prev:     nil,
		wantAgg:  &federation.AggregatedStatus{StaleClusters: 2},
		wantCond: metav1.ConditionUnknown, reason: status.ReasonNoQuorum,
		message: "fresh data from 1 of 3 placed clusters, not a majority: status.aggregated keeps its last values; no fresh data from: b, c",
		stale:   []bool{false, true, true},
	}, {
		name:     "2 placed, 1 fresh: half is no majority",
		clusters: placed[:2],
		members:  []status.Member{fresh(deploy(1), now), {ClusterReady: true}},
		prev:     lastGood,
		wantAgg:  &federation.AggregatedStatus{Replicas: 9, ReadyReplicas: 9, AvailableReplicas: 9, UpdatedReplicas: 9, Clusters: 3, StaleClusters: 1},
		wantCond: metav1.ConditionUnknown, reason: status.ReasonNoQuorum,
		message: "fresh data from 1 of 2 placed clusters, not a majority: status.aggregated keeps its last values; no fresh data from: b",
		stale:   []bool{false, true},
	}, {
		name:     "1 placed, fresh: quorum of one",
		clusters: placed[:1],
		members:  []status.Member{fresh(deploy(2), now)},
		prev:     nil,
		wantAgg:  &federation.AggregatedStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2, Clusters: 1},
		wantCond: metav1.ConditionTrue, reason: status.ReasonReady, message: "ready in 1 of 1 placed clusters",
		stale: []bool{false},
	}, {
		name:     "read exactly StaleAfter ago is still fresh",
		clusters: placed[:1],
		members:  []status.Member{fresh(deploy(2), now.Add(-staleAfter))},
		prev:     nil,
		wantAgg:  &federation.AggregatedStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2, Clusters: 1},
		wantCond: metav1.ConditionTrue, reason: status.ReasonReady, message: "ready in 1 of 1 placed clusters",
		stale: []bool{false},
	}, {
		name:     "nothing placed",
		clusters: nil,
		prev:     lastGood,
		wantAgg:  &federation.AggregatedStatus{},
		wantCond: metav1.ConditionFalse, reason: status.ReasonNoClusters, message: "status.clusters lists no cluster",
	}, {
		name:     "fresh but not ready, another stale",
		clusters: placed,
		members: []status.Member{fresh(deploy(3), now), fresh(&status.Observation{Message: "the member object does not exist"}, now),
			{ClusterReady: false, LastRead: now, Observation: deploy(3)}},
		prev:     lastGood,
		wantAgg:  &federation.AggregatedStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3, Clusters: 2, StaleClusters: 1},
		wantCond: metav1.ConditionFalse, reason: status.ReasonNotReady,
		message: "not ready: b: the member object does not exist; no fresh data from: c",
		stale:   []bool{false, false, true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := propagatedAt(&federation.FederatedStatus{Clusters: tt.clusters, Aggregated: tt.prev,
				Conditions: []metav1.Condition{readyCond(metav1.ConditionTrue, status.ReasonReady, t0)}}, 2)
			before := st.DeepCopy()
			got := status.Aggregate(status.Input{Generation: 2, Status: st, Members: tt.members, Now: now, StaleAfter: staleAfter})
			require.Empty(t, cmp.Diff(before, st), "Aggregate modified its input")
			if diff := cmp.Diff(tt.wantAgg, got.Aggregated); diff != "" {
				t.Errorf("aggregated (-want +got):\n%s", diff)
			}
			require.Equal(t, tt.wantCond, got.Ready.Status)
			require.Equal(t, tt.reason, got.Ready.Reason)
			require.Equal(t, tt.message, got.Ready.Message)
			require.Equal(t, int64(2), got.Ready.ObservedGeneration)
			require.Len(t, got.Clusters, len(tt.clusters))
			stale := 0
			for _, e := range got.Clusters {
				if e.Stale {
					stale++
				}
			}
			require.NotNil(t, got.Aggregated, "status.aggregated")
			require.EqualValues(t, stale, got.Aggregated.StaleClusters, "status.aggregated.staleClusters counts the stale entries, with quorum or without")
			for i, e := range got.Clusters {
				require.Equal(t, tt.stale[i], e.Stale, "stale of %s", e.Name)
				require.Equal(t, tt.clusters[i].Name, e.Name)
				require.Equal(t, tt.clusters[i].Revision, e.Revision, "sync's field of %s changed", e.Name)
				if e.Stale {
					// Stale data stays visible as last known.
					require.Equal(t, *tt.clusters[i].Replicas, *e.Replicas)
					require.Equal(t, tt.clusters[i].LastObserved, e.LastObserved)
				}
			}
			require.True(t, got.Changed)
		})
	}
}

// TestAggregateNoChurn: with the same data, a later pass changes nothing, whatever the clock
// says; lastObserved moves only with a change, and then only when it is old.
func TestAggregateNoChurn(t *testing.T) {
	st := propagatedAt(&federation.FederatedStatus{}, 0)
	members := func(at time.Time) []status.Member {
		return []status.Member{fresh(deploy(2), at), fresh(deploy(3), at), fresh(deploy(4), at)}
	}
	st.Clusters = []federation.MemberStatus{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	first := status.Aggregate(status.Input{Status: st, Members: members(t0), Now: t0, StaleAfter: staleAfter})
	require.True(t, first.Changed)
	for _, e := range first.Clusters {
		require.Equal(t, mtime(t0), e.LastObserved)
	}
	st = propagatedAt(&federation.FederatedStatus{Clusters: first.Clusters, Aggregated: first.Aggregated, Conditions: []metav1.Condition{first.Ready}}, 0)

	for _, later := range []time.Duration{time.Second, 30 * time.Second, time.Hour, 24 * time.Hour} {
		now := t0.Add(later)
		again := status.Aggregate(status.Input{Status: st, Members: members(now), Now: now, StaleAfter: staleAfter})
		require.False(t, again.Changed, "after %s", later)
	}

	// One entry changes 60s later: the others' stamps are older than StaleAfter/2 (45s) and
	// move with the write; 30s later they would not have.
	for _, tc := range []struct {
		after time.Duration
		moved bool
	}{{30 * time.Second, false}, {60 * time.Second, true}} {
		now := t0.Add(tc.after)
		m := members(now)
		m[0] = fresh(deploy(5), now)
		got := status.Aggregate(status.Input{Status: st, Members: m, Now: now, StaleAfter: staleAfter})
		require.True(t, got.Changed)
		require.Equal(t, mtime(now), got.Clusters[0].LastObserved, "the changed entry")
		want := mtime(t0)
		if tc.moved {
			want = mtime(now)
		}
		require.Equal(t, want, got.Clusters[1].LastObserved, "after %s", tc.after)
		require.Equal(t, first.Ready.LastTransitionTime, got.Ready.LastTransitionTime, "Ready stayed True")
	}
}

// TestAggregateSteadyAllocations: a pass that changes nothing (the usual one: the Collector
// runs it for every object every period) allocates only for the Ready condition's message,
// however many clusters the object is placed in.
func TestAggregateSteadyAllocations(t *testing.T) {
	allocs := func(clusters int) float64 {
		st := propagatedAt(&federation.FederatedStatus{Clusters: make([]federation.MemberStatus, clusters)}, 0)
		members := make([]status.Member, clusters)
		for i := range clusters {
			st.Clusters[i].Name = fmt.Sprintf("c%02d", i)
			members[i] = fresh(deploy(int64(1+i%3)), t0)
		}
		first := status.Aggregate(status.Input{Status: st, Members: members, Now: t0, StaleAfter: staleAfter})
		st = propagatedAt(&federation.FederatedStatus{Clusters: first.Clusters, Aggregated: first.Aggregated, Conditions: []metav1.Condition{first.Ready}}, 0)
		in := status.Input{Status: st, Members: members, Now: t0.Add(30 * time.Second), StaleAfter: staleAfter}
		require.False(t, status.Aggregate(in).Changed)
		return testing.AllocsPerRun(100, func() { status.Aggregate(in) })
	}
	// The race detector adds an allocation now and then: the bound is not exact, but it does
	// not grow with the clusters (one per cluster made it 5 and 52).
	for _, clusters := range []int{3, 50} {
		require.LessOrEqual(t, allocs(clusters), 3.0, "allocations of a pass over %d unchanged clusters", clusters)
	}
}

// TestAggregateRecovery: a cluster comes back from a partition: its entry is fresh again,
// the sum includes it, and Ready's transition time moves only with its status.
func TestAggregateRecovery(t *testing.T) {
	now := t0.Add(5 * time.Minute)
	st := &federation.FederatedStatus{
		Clusters:   []federation.MemberStatus{entry("a", 3, t0, false), entry("b", 3, t0, true), entry("c", 3, t0, true)},
		Aggregated: &federation.AggregatedStatus{Replicas: 9, ReadyReplicas: 9, AvailableReplicas: 9, UpdatedReplicas: 9, Clusters: 3},
		Conditions: []metav1.Condition{readyCond(metav1.ConditionUnknown, status.ReasonNoQuorum, t0)},
	}
	st = propagatedAt(st, 0)
	got := status.Aggregate(status.Input{Status: st, Now: now, StaleAfter: staleAfter,
		Members: []status.Member{fresh(deploy(3), now), fresh(deploy(4), now), fresh(deploy(2), now)}})
	require.Equal(t, &federation.AggregatedStatus{Replicas: 9, ReadyReplicas: 9, AvailableReplicas: 9, UpdatedReplicas: 9, Clusters: 3}, got.Aggregated)
	require.Equal(t, metav1.ConditionTrue, got.Ready.Status)
	require.Equal(t, metav1.NewTime(now), got.Ready.LastTransitionTime)
	for _, e := range got.Clusters {
		require.False(t, e.Stale)
	}
	require.Equal(t, mtime(now), got.Clusters[1].LastObserved, "became fresh: stamped")
	require.Equal(t, mtime(now), got.Clusters[0].LastObserved, "same values, but written anyway and older than StaleAfter/2")
}

// TestAggregateUnhealthySince: status.clusters[].unhealthySince is when the Collector first
// saw, with fresh data, the member running its rendered revision but not Ready, nor
// progressing in time. It stays while that lasts, and goes when the member is Ready or
// progressing, its data stale, or a new revision is rendered (status.clusters[].revision
// moves past the observed one).
func TestAggregateUnhealthySince(t *testing.T) {
	sick := func() *status.Observation { o := deploy(3); o.Ready = false; o.Message = "0 of 3 ready"; return o }
	oldRev := func() *status.Observation { o := sick(); o.Revision = 2; return o }
	since := func(e federation.MemberStatus, at time.Time) federation.MemberStatus {
		e.UnhealthySince = mtime(at)
		return e
	}
	newRev := func() *status.Observation { o := sick(); o.Revision = 4; return o }
	// progressing is a rollout on its way within its deadline, availability held.
	progressing := func() *status.Observation { o := sick(); o.Progressing = true; return o }
	// observed is an entry as the Collector wrote it after seeing the member at revision rev.
	observed := func(e federation.MemberStatus, rev int64) federation.MemberStatus {
		e.ObservedRevision = rev
		return e
	}
	// at is the entry with the revision sync recorded for it.
	at := func(e federation.MemberStatus, rev int64) federation.MemberStatus {
		e.Revision = rev
		return e
	}
	failing := func(e federation.MemberStatus) federation.MemberStatus {
		e.Propagation, e.Message = "UpdateFailed", "conflict"
		return e
	}
	later := t0.Add(time.Minute)
	tests := []struct {
		name   string
		before federation.MemberStatus
		member status.Member
		want   *time.Time
	}{
		{name: "fresh, its revision, not ready: from this read", before: observed(entry("a", 3, t0, false), 3), member: fresh(sick(), later), want: &later},
		{name: "still not ready: the first time stays", before: since(observed(entry("a", 3, t0, false), 3), t0), member: fresh(sick(), later), want: &t0},
		{name: "ready again: cleared", before: since(observed(entry("a", 3, t0, false), 3), t0), member: fresh(deploy(3), later)},
		{name: "stale: cleared", before: since(observed(entry("a", 3, t0, false), 3), t0), member: status.Member{ClusterReady: false, LastRead: later, Observation: sick()}},
		{name: "the member rewritten at a new revision: from this read", before: since(observed(at(entry("a", 3, t0, false), 4), 3), t0), member: fresh(newRev(), later), want: &later},
		{name: "a revision that did not rewrite the member (a placement change): the first time stays", before: since(observed(at(entry("a", 3, t0, false), 4), 3), t0), member: fresh(sick(), later), want: &t0},
		{name: "an older revision not yet replaced, seen first: from this read", before: observed(entry("a", 3, t0, false), 2), member: fresh(oldRev(), later), want: &later},
		{name: "a revision newer than sync's: never set", before: observed(entry("a", 3, t0, false), 3), member: fresh(newRev(), later)},
		{name: "sync reports it not current: never set", before: failing(observed(entry("a", 3, t0, false), 3)), member: fresh(sick(), later)},
		{name: "a rollout progressing in time: never set", before: observed(entry("a", 3, t0, false), 3), member: fresh(progressing(), later)},
		{name: "a rollout progressing again: cleared", before: since(observed(entry("a", 3, t0, false), 3), t0), member: fresh(progressing(), later)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := propagatedAt(&federation.FederatedStatus{Clusters: []federation.MemberStatus{tt.before}}, 1)
			agg := status.Aggregate(status.Input{Generation: 1, Status: st, Members: []status.Member{tt.member}, Now: later, StaleAfter: staleAfter})
			var got *time.Time
			if u := agg.Clusters[0].UnhealthySince; u != nil {
				got = &u.Time
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unhealthySince (-want +got):\n%s", diff)
			}
			if !tt.before.UnhealthySince.Equal(agg.Clusters[0].UnhealthySince) && !agg.Changed {
				t.Errorf("unhealthySince changed but Changed is false")
			}
		})
	}
}
