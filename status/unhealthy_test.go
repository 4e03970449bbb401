package status_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// TestAggregateUnhealthySince: status.clusters[].unhealthySince is when the Collector first
// saw, with fresh data, the member running its rendered revision but not Ready. It stays
// while that lasts, and goes when the member is Ready, its data stale, or a new revision is
// rendered (status.clusters[].revision moves past the observed one).
func TestAggregateUnhealthySince(t *testing.T) {
	sick := func() *status.Observation { o := deploy(3); o.Ready = false; o.Message = "0 of 3 ready"; return o }
	oldRev := func() *status.Observation { o := sick(); o.Revision = 2; return o }
	since := func(e federation.MemberStatus, at time.Time) federation.MemberStatus {
		e.UnhealthySince = mtime(at)
		return e
	}
	later := t0.Add(time.Minute)
	tests := []struct {
		name   string
		before federation.MemberStatus
		member status.Member
		want   *time.Time
	}{
		{name: "fresh, its revision, not ready: from this read", before: entry("a", 3, t0, false), member: fresh(sick(), later), want: &later},
		{name: "still not ready: the first time stays", before: since(entry("a", 3, t0, false), t0), member: fresh(sick(), later), want: &t0},
		{name: "ready again: cleared", before: since(entry("a", 3, t0, false), t0), member: fresh(deploy(3), later)},
		{name: "stale: cleared", before: since(entry("a", 3, t0, false), t0), member: status.Member{ClusterReady: false, LastRead: later, Observation: sick()}},
		{name: "a new revision rendered: cleared", before: since(entry("a", 3, t0, false), t0), member: fresh(oldRev(), later)},
		{name: "an old revision not ready: never set", before: entry("a", 3, t0, false), member: fresh(oldRev(), later)},
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
