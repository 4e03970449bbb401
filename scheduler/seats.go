package scheduler

import (
	"math"
	"sort"
)

// Seat selection: which k seats of per-cluster ranges come first in the order of
// [divider.before], without walking them one by one.

// selectAll gives up to k seats of the ranges [base, lim) in the order, zero weights
// included (they come after every positive weight), and returns how many it gave. Every
// cluster is at its base (s == base) on entry; sp counts the ranges, as the caller counted
// them while it set them.
func (d *divider) selectAll(cs []cand, k int64, sp span) int64 {
	if k <= 0 {
		return 0
	}
	room, zeroRoom := sp.room, sp.zeroRoom
	if k < room {
		d.selectPositive(cs, k, &sp)
		return k
	}
	for i := range cs {
		if cs[i].w > 0 {
			cs[i].s = cs[i].lim
		}
	}
	k -= room
	if zeroRoom == 0 || k == 0 {
		return room
	}
	return room + d.selectZero(cs, min(k, zeroRoom))
}

// selectPositive gives exactly k seats among the positive-weight ranges, whose room (the sum
// of lim-base, sp.room) is more than k.
func (d *divider) selectPositive(cs []cand, k int64, sp *span) {
	room := sp.room
	// Every cluster's seats above a divisor are counted exactly, so the set they form is a
	// prefix of the order and only the difference to k is left for the heap. The continuous
	// estimate is close when shares are large; when many shares are below one seat it is
	// not, so a few counting passes (each O(C), far cheaper than C heap operations) move the
	// divisor first.
	tolerance := int64(8 + len(cs)/64)
	var got int64
	switch {
	case k <= tolerance:
		// A handful of seats (a total that moved by a few replicas): the empty selection
		// (every cluster at its base, as on entry) is already a prefix of the order, so the
		// heap alone is cheapest.
	case room-k <= tolerance:
		// All but a handful (a total one lower, replicas kept): the full selection is a
		// prefix too.
		for i := range cs {
			if cs[i].w > 0 {
				cs[i].s = cs[i].lim
			}
		}
		got = room
	default:
		got = d.seatsNear(cs, k, tolerance, sp)
	}
	switch {
	case got < k:
		d.grow(cs, k-got)
	case got > k:
		d.shrink(cs, got-k)
	}
}

// seatsNear sets the clusters to the seats above the divisor whose count comes closest to
// k (within tolerance, or as close as the search gets), and returns that count.
func (d *divider) seatsNear(cs []cand, k, tolerance int64, sp *span) int64 {
	lam := d.estimate(cs, k, sp)
	got := d.countAbove(cs, lam)
	best, bestDiff := lam, absDiff(got, k)
	// The exact count is a monotone step function of λ: bracket k and narrow the bracket,
	// by interpolation first (fast when the estimate was close), then by bisection (sure,
	// down to float resolution, for inputs whose counts jump in narrow windows).
	b := bracket{lo: 0, hi: math.Inf(1)}
	for step := 0; step < 200 && bestDiff > tolerance; step++ {
		b.narrow(lam, got, k)
		if !math.IsInf(b.hi, 1) && b.ghi-b.glo <= int64(len(cs)) {
			// Counts can jump at one divisor by at most a seat per cluster (ties); a gap this
			// small is cheaper to close by selection than by bisecting towards the jump.
			break
		}
		next, ok := b.next(step, lam, got, k)
		if !ok {
			break // float resolution: the heap does the rest
		}
		lam = next
		got = d.countAbove(cs, lam)
		if dd := absDiff(got, k); dd < bestDiff {
			best, bestDiff = lam, dd
		}
	}
	if lam != best {
		got = d.countAbove(cs, best)
	}
	return got
}

// bracket is the divisors seatsNear has counted at: lo gave glo seats (below k), hi gave
// ghi (k or more; +Inf until one did).
type bracket struct {
	lo, hi   float64
	glo, ghi int64
}

// narrow moves the bound that lam, which gave got seats, replaces.
func (b *bracket) narrow(lam float64, got, k int64) {
	if got < k {
		b.lo, b.glo = lam, got
	} else {
		b.hi, b.ghi = lam, got
	}
}

// next is the divisor to count at after lam (got seats) at step: extrapolated while there
// is no upper bound, interpolated for the first steps, then by bisection (geometric while
// the bounds are far apart). It is false when no divisor lies strictly between the bounds.
func (b *bracket) next(step int, lam float64, got, k int64) (float64, bool) {
	lo, hi := b.lo, b.hi
	next := math.NaN()
	switch {
	case step >= 6: // bisect
	case math.IsInf(hi, 1) && got > 0:
		next = lam * min(float64(k)/float64(got), 16)
	case b.glo < b.ghi && !math.IsInf(hi, 1):
		next = lo + (hi-lo)*float64(k-b.glo)/float64(b.ghi-b.glo)
	}
	if !(next > lo && next < hi) || next == lam {
		switch {
		case math.IsInf(hi, 1):
			next = max(lam*16, 1)
		case lo == 0:
			next = hi / 16
		case hi/lo > 4:
			next = math.Sqrt(lo) * math.Sqrt(hi)
		default:
			next = lo + (hi-lo)/2
		}
	}
	return next, next > lo && next < hi
}

// absDiff returns |a-b| for non-negative a and b.
func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// countAbove sets every positive-weight cluster to its seats with priority above 1/(2λ),
// clamped to [base, lim], and returns how many seats that gives beyond the bases. It counts
// in floating point where that is sure, and in 128 bits where not.
func (d *divider) countAbove(cs []cand, lam float64) int64 {
	x2 := 2 * lam
	x := divisor(x2)
	var got int64
	for i := range cs {
		c := &cs[i]
		if c.w == 0 || c.base >= c.lim {
			continue
		}
		n, sure := seatsAboveFloat(c.w, x2) // exact but where rounding could matter
		if !sure {
			n = x.seatsAbove(c.w)
		}
		switch {
		case n <= uint64(c.base):
			c.s = c.base
		case n >= uint64(c.lim):
			c.s = c.lim
		default:
			c.s = int64(n)
		}
		got = satAdd(got, c.s-c.base)
	}
	return got
}

// estimate returns λ with Σ clamp(w·λ, base, lim) - base ≈ k over the positive-weight
// ranges, counted in sp: the continuous version of the division. Only speed depends on it,
// not the result.
func (d *divider) estimate(cs []cand, k int64, sp *span) float64 {
	if !sp.summed {
		sp.plain, sp.summed = true, true
		for i := range cs {
			sp.sum(&cs[i])
		}
	}
	wsum := sp.wsum
	target := float64(k)
	lam := (target + sp.bsum) / wsum
	if sp.plain {
		return lam // every range [0, unbounded): nothing clamps, and Σ w·λ = k
	}
	lo, hi := 0.0, math.Inf(1)
	for range 64 {
		var g, slope float64
		for i := range cs {
			c := &cs[i]
			if c.w == 0 || c.base >= c.lim {
				continue
			}
			w := float64(c.w)
			v := w * lam
			switch b, l := float64(c.base), float64(c.lim); {
			case v <= b:
			case v >= l:
				g += l - b
			default:
				g += v - b
				slope += w
			}
		}
		diff := target - g
		if math.Abs(diff) < 0.5 {
			break
		}
		if diff > 0 {
			lo = lam
		} else {
			hi = lam
		}
		next := math.NaN()
		if slope > 0 {
			next = lam + diff/slope
		}
		if !(next > lo && next < hi) { // also catches NaN
			if math.IsInf(hi, 1) {
				next = 2*lam + 1/wsum
			} else {
				next = lo + (hi-lo)/2
			}
		}
		if next == lam {
			break
		}
		lam = next
	}
	return lam
}

// selectZero gives k seats (k <= their room) among the zero-weight ranges. Their seats all
// have priority 0, so the order is by seat index, then names: fill every cluster up to a
// level L, then the next seat of the first few in the tie order.
func (d *divider) selectZero(cs []cand, k int64) int64 {
	count := func(level int64) int64 {
		var n int64
		for i := range cs {
			if c := &cs[i]; c.w == 0 {
				n = satAdd(n, min(max(level, c.base), c.lim)-c.base)
			}
		}
		return n
	}
	var top int64
	for i := range cs {
		if cs[i].w == 0 {
			top = max(top, cs[i].lim)
		}
	}
	lo, hi := int64(0), top // count(lo) <= k; find the largest such level
	for lo < hi {
		gap := hi - lo // lo >= 0, so no overflow; mid rounds up without hi-lo+1
		mid := lo + gap/2 + gap%2
		if count(mid) <= k {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	left := k - count(lo)
	var next []int32
	for i := range cs {
		c := &cs[i]
		if c.w != 0 {
			continue
		}
		c.s = min(max(lo, c.base), c.lim)
		if c.base <= lo && lo < c.lim {
			next = append(next, int32(i))
		}
	}
	sort.Slice(next, func(x, y int) bool { return d.nameFirst(d.name(&cs[next[x]]), d.name(&cs[next[y]])) })
	for _, i := range next[:left] {
		cs[i].s++
	}
	return k
}
