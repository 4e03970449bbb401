package scheduler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReasonsRoundTrip checks that a plan's compact reasons read back every record as the
// division left it, whatever the widths its columns take.
func TestReasonsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	// Values of every width a column can take, and the edges between them.
	values := []int64{0, 1, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, math.MaxInt64}
	pick := func() int64 {
		if r.IntN(3) == 0 {
			return values[r.IntN(len(values))]
		}
		return r.Int64N(values[1+r.IntN(len(values)-1)]) // below an edge
	}
	for round := range 2000 {
		n := 1 + r.IntN(20)
		all := make([]cand, n)
		for i := range all {
			c := &all[i]
			c.s, c.m, c.kept, c.w = pick(), pick(), pick(), uint64(pick())
			c.pref, c.by = Source(r.IntN(3)), Bound(r.IntN(4))
			switch {
			case round%2 == 0: // limits as divide leaves them: implied by the bound
				c.limit, _ = impliedLimit(c.by, c.s)
				if c.by == DomainSkew {
					c.limit = pick()
				}
			default:
				c.limit = pick()
			}
		}
		var used colBits
		for i := range all {
			used.add(&all[i])
		}
		why := newReasons(all, &used, make([]int64, n))
		if why.len() != n {
			t.Fatalf("round %d: len() = %d; want %d", round, why.len(), n)
		}
		for i := range all {
			c := &all[i]
			want := rec{s: c.s, m: c.m, kept: c.kept, w: c.w, limit: c.limit, pref: c.pref, by: c.by}
			if got := why.rec(i); got != want {
				t.Fatalf("round %d: rec(%d) = %+v; want %+v", round, i, got, want)
			}
		}
	}
}

// TestColumnWidths checks the bytes a column takes per value.
func TestColumnWidths(t *testing.T) {
	for _, tc := range []struct {
		or   uint64
		want int
	}{
		{0, 0}, {1, 1}, {255, 1}, {256, 2}, {65535, 2}, {65536, 4}, {1<<32 - 1, 4}, {1 << 32, 8},
		{math.MaxUint64, 8},
	} {
		if got := widthOf(tc.or); got != tc.want {
			t.Errorf("widthOf(%d) = %d; want %d", tc.or, got, tc.want)
		}
	}
}
