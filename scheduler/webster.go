package scheduler

import (
	"math"
	"math/bits"
	"sort"
)

// The Webster division is defined seat by seat (see doc.go): minimums, then kept replicas
// trimmed one at a time from the smallest weight/(2s-1), then one replica at a time to the
// largest weight/(2s+1). Every step is the same question: given per-cluster ranges of seats
// [base, lim), which K seats come first in one total order?
//
// The order: seat k of cluster c (its (k+1)-th replica) has priority w/(2k+1); higher priority
// first, then lower k ("fewer replicas first"), then the tie order of names. Within one
// cluster the priorities fall as k grows, so the seat-by-seat loop is a k-way merge and its
// result is the first K seats of the merged order. select computes that set without walking
// it: it finds a divisor, counts every cluster's seats above it exactly, and corrects the few
// seats the divisor got wrong with a heap. Its cost is O(C log C) whatever K is.

// cand is one candidate cluster during a division.
//
// It holds no pointer, so a slice of thousands costs the garbage collector nothing; the name
// is d.names[idx].
type cand struct {
	// The division's working state, first: it is what the comparisons touch.
	w         uint64 // effective weight (never negative)
	s         int64  // seats so far
	base, lim int64  // the range a selection works on
	lo        int64  // minReplicas (nil = 0)
	hi        int64  // min(maxReplicas, capacity); math.MaxInt64 when unbounded
	m         int64  // minimum given (step 2)
	kept      int64  // kept replicas beyond m (step 3)

	max    int64 // maxReplicas alone (math.MaxInt64 when unbounded), for overflow
	cur    int64 // current replicas, when hasCur
	idx    int32 // index in Request.Clusters (in d.names); capacity and cost are read there
	hiBy   Bound // what set hi
	hasCur bool
	hasMax bool
	bound  bool // the bound hiBy held the cluster back
}

// divider carries what every step of one division shares.
type divider struct {
	clusters []ClusterState // the request's clusters: cand.idx indexes them
	names    []string       // when not nil, the names by cand.idx instead (domains)
	desc     bool           // tie order: names descending (the Key's FNV-1a hash is odd)
	heap     []int32        // scratch for select
}

// name returns c's name.
func (d *divider) name(c *cand) string {
	if d.names != nil {
		return d.names[c.idx]
	}
	return d.clusters[c.idx].Name
}

// nameFirst reports whether name x comes before y in the tie order.
func (d *divider) nameFirst(x, y string) bool {
	if d.desc {
		return x > y
	}
	return x < y
}

// before reports whether seat ka of a comes before seat kb of b: a.w/(2ka+1) > b.w/(2kb+1),
// compared exactly as a.w*(2kb+1) > b.w*(2ka+1) in 128 bits, then fewer replicas first, then
// the tie order.
func (d *divider) before(a *cand, ka int64, b *cand, kb int64) bool {
	h1, l1 := bits.Mul64(a.w, 2*uint64(kb)+1)
	h2, l2 := bits.Mul64(b.w, 2*uint64(ka)+1)
	if h1 != h2 {
		return h1 > h2
	}
	if l1 != l2 {
		return l1 > l2
	}
	if ka != kb {
		return ka < kb
	}
	return d.nameFirst(d.name(a), d.name(b))
}

// mins is step 2: every candidate gets min(lo, hi, what is left), by weight descending then
// the tie order. It returns the replicas left.
func (d *divider) mins(cs []cand, total int64) int64 {
	var need int64
	for i := range cs {
		need = satAdd(need, min(cs[i].lo, cs[i].hi))
	}
	if need <= total {
		for i := range cs {
			cs[i].m = min(cs[i].lo, cs[i].hi)
			cs[i].s = cs[i].m
		}
		return total - need
	}
	// Not enough for every minimum: the order decides, so sort (only in this case).
	order := make([]int32, len(cs))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(x, y int) bool {
		a, b := &cs[order[x]], &cs[order[y]]
		if a.w != b.w {
			return a.w > b.w
		}
		return d.nameFirst(d.name(a), d.name(b))
	})
	left := total
	for _, i := range order {
		c := &cs[i]
		c.m = min(c.lo, c.hi, left)
		c.s = c.m
		left -= c.m
	}
	return left
}

// keep is step 3 (rebalance off): every candidate starts at its current replicas clamped to
// [m, hi]; when that is more than is left, the kept seats that come last in the order go.
// It returns the replicas left.
func (d *divider) keep(cs []cand, left int64) int64 {
	var extra int64
	for i := range cs {
		c := &cs[i]
		c.base, c.lim = c.s, c.s
		if c.hasCur {
			c.lim = max(c.s, min(c.cur, c.hi))
		}
		extra = satAdd(extra, c.lim-c.base)
	}
	got := extra
	if extra > left {
		got = d.selectAll(cs, left)
	} else {
		for i := range cs {
			cs[i].s = cs[i].lim
		}
	}
	for i := range cs {
		cs[i].kept = cs[i].s - cs[i].m
	}
	return left - got
}

// add is step 4: one seat at a time to the first seat in the order among candidates below hi
// with a positive weight. It returns the replicas left.
func (d *divider) add(cs []cand, left int64) int64 {
	for i := range cs {
		c := &cs[i]
		c.base, c.lim = c.s, c.s
		if c.w > 0 {
			c.lim = c.hi
		}
	}
	return left - d.selectAll(cs, left)
}

// selectAll gives up to k seats of the ranges [base, lim) in the order, zero weights
// included (they come after every positive weight), and returns how many it gave.
func (d *divider) selectAll(cs []cand, k int64) int64 {
	if k <= 0 {
		return 0
	}
	var room, zeroRoom int64
	for i := range cs {
		if cs[i].w > 0 {
			room = satAdd(room, cs[i].lim-cs[i].base)
		} else {
			zeroRoom = satAdd(zeroRoom, cs[i].lim-cs[i].base)
		}
	}
	if k < room {
		d.selectPositive(cs, k)
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

// selectPositive gives exactly k seats (k < the room) among the positive-weight ranges.
func (d *divider) selectPositive(cs []cand, k int64) {
	// Every cluster's seats above a divisor are counted exactly, so the set they form is a
	// prefix of the order and only the difference to k is left for the heap. The continuous
	// estimate is close when shares are large; when many shares are below one seat it is
	// not, so a few counting passes (each O(C), far cheaper than C heap operations) move the
	// divisor first.
	lam := d.estimate(cs, k)
	got := d.countAbove(cs, lam)
	lo, hi := 0.0, math.Inf(1)
	glo, ghi := int64(0), int64(0)
	tolerance := int64(8 + len(cs)/64)
	for range 12 {
		if diff := got - k; diff >= -tolerance && diff <= tolerance {
			break
		}
		if got < k {
			lo, glo = lam, got
		} else {
			hi, ghi = lam, got
		}
		next := math.NaN()
		switch {
		case math.IsInf(hi, 1) && got > 0:
			next = lam * min(float64(k)/float64(got), 16)
		case math.IsInf(hi, 1):
			next = lam * 16
		case glo < ghi: // regula falsi inside the bracket
			next = lo + (hi-lo)*float64(k-glo)/float64(ghi-glo)
		}
		if !(next > lo && next < hi) || next == lam {
			next = lo + (hi-lo)/2
		}
		if next == lam || next == lo || next == hi {
			break
		}
		lam = next
		got = d.countAbove(cs, lam)
	}
	switch {
	case got < k:
		d.grow(cs, k-got)
	case got > k:
		d.shrink(cs, got-k)
	}
}

// countAbove sets every positive-weight cluster to its seats with priority above 1/(2λ),
// clamped to [base, lim], and returns how many seats that gives beyond the bases.
func (d *divider) countAbove(cs []cand, lam float64) int64 {
	x := divisor(2 * lam)
	var got int64
	for i := range cs {
		c := &cs[i]
		if c.w == 0 || c.base >= c.lim {
			continue
		}
		n := x.seatsAbove(c.w)
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
// ranges: the continuous version of the division. Only speed depends on it, not the result.
func (d *divider) estimate(cs []cand, k int64) float64 {
	var wsum, bsum float64
	for i := range cs {
		c := &cs[i]
		if c.w > 0 && c.base < c.lim {
			wsum += float64(c.w)
			bsum += float64(c.base)
		}
	}
	target := float64(k)
	lam := (target + bsum) / wsum
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

// scale is a positive float64 x split exactly as m·2^e, m an integer of at most 53 bits.
type scale struct {
	m   uint64
	e   int
	inf bool
}

// divisor splits x (NaN and non-positive values count as 0).
func divisor(x float64) scale {
	if !(x > 0) {
		return scale{}
	}
	if math.IsInf(x, 1) {
		return scale{inf: true}
	}
	frac, exp := math.Frexp(x)
	return scale{m: uint64(frac * (1 << 53)), e: exp - 53}
}

// seatsAbove returns the number of seats k >= 0 with w/(2k+1) > 1/x, that is 2k+1 < w·x,
// exactly: w·x is the rational w·m·2^e. Counts of 2^63 and more (more than any int64 bound)
// come back as some value of at least 2^63.
func (x scale) seatsAbove(w uint64) uint64 {
	if w == 0 || x.m == 0 {
		if x.inf && w > 0 {
			return math.MaxUint64
		}
		return 0
	}
	e := x.e
	hi, lo := bits.Mul64(w, x.m) // P = w·m < 2^117
	if e >= 0 {
		// Seats: odd numbers below the integer P·2^e, floor(P·2^e / 2).
		if hi != 0 || e >= 64 || bits.Len64(lo)+e > 64 {
			return math.MaxUint64
		}
		return (lo << uint(e)) >> 1
	}
	sh := uint(-e)
	if sh >= 118 {
		return 0 // P/2^sh < 1/2: not even seat 0
	}
	// Seats: odd numbers below P/2^sh, floor(ceil(P/2^sh) / 2).
	var carry uint64
	addLo, addHi := ^uint64(0), ^uint64(0) // 2^sh - 1
	if sh < 64 {
		addLo, addHi = (uint64(1)<<sh)-1, 0
	} else {
		addHi = (uint64(1) << (sh - 64)) - 1
	}
	lo, carry = bits.Add64(lo, addLo, 0)
	hi, _ = bits.Add64(hi, addHi, carry)
	var q uint64
	if sh < 64 {
		if hi>>sh != 0 {
			return math.MaxUint64
		}
		q = lo>>sh | hi<<(64-sh) // sh >= 1 here
	} else {
		q = hi >> (sh - 64)
	}
	return q >> 1
}

// grow adds n more seats, each the first seat in the order among the clusters below lim.
func (d *divider) grow(cs []cand, n int64) {
	// A max-heap on each cluster's next seat.
	less := func(x, y int32) bool { return d.before(&cs[x], cs[x].s, &cs[y], cs[y].s) }
	h := d.fewest(cs, n, func(c *cand) bool { return c.w > 0 && c.s < c.lim }, less)
	for ; n > 0 && len(h) > 0; n-- {
		c := &cs[h[0]]
		c.s++
		if c.s == c.lim {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		siftDown(h, 0, less)
	}
}

// shrink takes back n seats, each the last seat in the order among the clusters above base.
func (d *divider) shrink(cs []cand, n int64) {
	// A min-heap on each cluster's last seat.
	less := func(x, y int32) bool { return d.before(&cs[y], cs[y].s-1, &cs[x], cs[x].s-1) }
	h := d.fewest(cs, n, func(c *cand) bool { return c.w > 0 && c.s > c.base }, less)
	for ; n > 0 && len(h) > 0; n-- {
		c := &cs[h[0]]
		c.s--
		if c.s == c.base {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		siftDown(h, 0, less)
	}
}

// fewest returns a heap (first under less at the root) of the at most n eligible clusters
// that come first under less. Only they can take part in n steps of grow or shrink: any
// other cluster's seat comes after n seats of theirs. Keeping n of C costs about C
// comparisons when n is small, where a heap of all C would cost 2C and more cache misses.
func (d *divider) fewest(cs []cand, n int64, eligible func(*cand) bool, less func(x, y int32) bool) []int32 {
	h := d.heap[:0]
	if n >= int64(len(cs)) {
		for i := range cs {
			if eligible(&cs[i]) {
				h = append(h, int32(i))
			}
		}
	} else {
		// A heap with the last of the kept ones at the root, to replace it quickly.
		after := func(x, y int32) bool { return less(y, x) }
		for i := range cs {
			if !eligible(&cs[i]) {
				continue
			}
			switch {
			case int64(len(h)) < n:
				h = append(h, int32(i))
				siftUp(h, len(h)-1, after)
			case less(int32(i), h[0]):
				h[0] = int32(i)
				siftDown(h, 0, after)
			}
		}
	}
	heapify(h, less)
	d.heap = h
	return h
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
		mid := lo + (hi-lo+1)/2
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

// siftUp moves element i up to its place.
func siftUp(h []int32, i int, less func(x, y int32) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func heapify(h []int32, less func(x, y int32) bool) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i, less)
	}
}

// siftDown restores the heap below i; the first element is the one less puts first.
func siftDown(h []int32, i int, less func(x, y int32) bool) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// satAdd adds two non-negative int64s, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}
