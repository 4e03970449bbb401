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
	newRev := func() *status.Observation { o := sick(); o.Revision = 4; return o }
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
