package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFewestExact checks fewest's float filter against the definition: the at most n
// eligible clusters that come first under the exact order, on requests made to fool a float
// key (weights and seat counts near 2^62 that differ in the last bits, exact ties, equal
// weights) as well as ordinary ones.
func TestFewestExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 20000 {
		c := 1 + r.IntN(40)
		cs := make([]cand, c)
		bigW := uint64(1)<<62 + r.Uint64N(1<<20)
		for j := range cs {
			x := &cs[j]
			x.idx = int32(j)
			switch r.IntN(4) {
			case 0: // near ties at the top of the range
				x.w = bigW - r.Uint64N(3)
				x.s = 1<<61 + r.Int64N(3)
			case 1: // exact ties
				x.w, x.s = 6, 2
			case 2:
				x.w, x.s = 2*uint64(1+r.IntN(3)), int64(r.IntN(4))
			default:
				x.w, x.s = r.Uint64N(10), r.Int64N(10)
			}
			x.base = max(0, x.s-r.Int64N(3))
			x.lim = x.s + r.Int64N(3)
		}
		d := &divider{names: make([]string, c), desc: r.IntN(2) == 0}
		for j := range d.names {
			d.names[j] = string(rune('a' + j))
		}
		n := 1 + r.Int64N(fewestSmall+8)
		for _, growing := range []bool{true, false} {
			less := func(x, y int32) bool { return d.before(&cs[x], cs[x].s, &cs[y], cs[y].s) }
			if !growing {
				less = func(x, y int32) bool { return d.before(&cs[y], cs[y].s-1, &cs[x], cs[x].s-1) }
			}
			var want []int32
			for j := range cs {
				if eligible(&cs[j], growing) {
					want = append(want, int32(j))
				}
			}
			slices.SortFunc(want, func(x, y int32) int {
				if less(x, y) {
					return -1
				}
				return 1
			})
			want = want[:min(int64(len(want)), n)]
			var small [fewestSmall]int32
			got := slices.Clone(d.fewest(cs, n, growing, less, &small))
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("case %d (n=%d, growing=%v): fewest = %v; want %v\n%+v", i, n, growing, got, want, cs)
			}
		}
	}
}
