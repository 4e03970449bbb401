package status_test

import (
	"testing"
	"time"

	"github.com/fedkit/fedkit/status"
)

// TestQuorumAndFreshness: the two rules every loop that sums members' reports shares with
// Aggregate (package autoscale calls them).
func TestQuorumAndFreshness(t *testing.T) {
	for _, tc := range []struct{ fresh, placed int }{{0, 0}, {1, 1}, {1, 2}, {2, 3}, {2, 4}, {3, 4}} {
		want := tc.placed > 0 && tc.fresh*2 > tc.placed
		if got := status.HasQuorum(tc.fresh, tc.placed); got != want {
			t.Errorf("HasQuorum(%d, %d) = %v; want %v", tc.fresh, tc.placed, got, want)
		}
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		ready bool
		read  time.Time
		want  bool
	}{
		{"just read", true, now, true},
		{"at the edge", true, now.Add(-time.Minute), true},
		{"too old", true, now.Add(-time.Minute - time.Second), false},
		{"never read", true, time.Time{}, false},
		{"cluster not ready", false, now, false},
	} {
		if got := status.IsFresh(tc.ready, tc.read, now, time.Minute); got != tc.want {
			t.Errorf("%s: IsFresh = %v; want %v", tc.name, got, tc.want)
		}
	}
}
