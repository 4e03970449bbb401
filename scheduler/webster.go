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

// cand is one cluster of the request: its bounds and weight, the division's working state,
// and afterwards the reasons for its count. A division's cands come from a pool (see
// scratch) and hold no pointer (the name is d.names[idx] or the request's); [Plan] keeps a
// compact copy of each, a rec, and builds an [Allocation] from one only when asked.
type cand struct {
	// The division's working state, first: it is what the comparisons touch.
	w         uint64 // effective weight (never negative)
	s         int64  // seats so far; the cluster's replicas in the end
	base, lim int64  // the range a selection works on
	lo        int64  // minReplicas (nil = 0)
	hi        int64  // min(maxReplicas, capacity); math.MaxInt64 when unbounded
	m         int64  // minimum given (step 2)
	kept      int64  // kept replicas beyond m (step 3)

	max   int64  // maxReplicas alone (math.MaxInt64 when unbounded), for overflow
	limit int64  // by's value, for Allocation.Limit
	idx   int32  // index in Request.Clusters (in d.names); current, capacity, cost are read there
	hiBy  Bound  // what set hi
	by    Bound  // the bound the plan reports (Allocation.Bound): hiBy, or DomainSkew
	pref  Source // where the preference came from; NoPreference: not a candidate
	bound bool   // the bound hiBy held the cluster back
}

// divider carries what every step of one division shares.
type divider struct {
	clusters []ClusterState // the request's clusters: cand.idx indexes them
	names    []string       // when not nil, the names by cand.idx instead (domains)
	cur      []int64        // with names, the current replicas by cand.idx (-1: unknown)
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

// current returns c's current replicas, and false when they are unknown.
func (d *divider) current(c *cand) (int64, bool) {
	if d.names != nil {
		v := d.cur[c.idx]
		return v, v >= 0
	}
	if p := d.clusters[c.idx].Current; p != nil {
		return *p, true
	}
	return 0, false
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
	for i := range cs { // every minimum in full, the common case; undone below if not
		c := &cs[i]
		c.m = min(c.lo, c.hi)
		c.s = c.m
		need = satAdd(need, c.m)
	}
	if need <= total {
		return total - need
	}
	// Not enough for every minimum: the order decides. Each cluster served takes at least one
	// replica, so at most total of those with a positive minimum are served: select them,
	// then sort only them.
	if cap(d.heap) < len(cs) {
		d.heap = make([]int32, 0, len(cs)) // the selection's scratch, borrowed
	}
	order := d.heap[:0]
	for i := range cs {
		cs[i].m, cs[i].s = 0, 0
		if min(cs[i].lo, cs[i].hi) > 0 {
			order = append(order, int32(i))
		}
	}
	first := func(x, y int32) bool {
		a, b := &cs[x], &cs[y]
		if a.w != b.w {
			return a.w > b.w
		}
		return d.nameFirst(d.name(a), d.name(b))
	}
	if int64(len(order)) > total {
		nthElement(order, int(total), first)
		order = order[:total]
	}
	sort.Slice(order, func(x, y int) bool { return first(order[x], order[y]) })
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
// [m, hi] (it finds every candidate at m); when that is more than is left, the kept seats
// that come last in the order go. It returns the replicas left.
//
// When every running replica fits (the steady state of a workload that scales up), keep
// also sets the records to step 4's ranges and returns them counted, with true: step 4 is
// then one selection on them (see give), with no second pass.
func (d *divider) keep(cs []cand, left int64) (int64, span, bool) {
	// One pass, as if everything fits: each candidate at its kept count, ranges for step 4.
	var extra int64
	var next span
	for i := range cs {
		c := &cs[i]
		top := c.s
		if cur, ok := d.current(c); ok {
			top = keptCount(c.s, cur, c.hi)
		}
		c.s, c.kept = top, top-c.m
		c.base, c.lim = stepRange(top, c.w, c.hi)
		extra = satAdd(extra, c.kept)
		next.count(c)
	}
	if extra <= left {
		return left - extra, next, true
	}
	// Too many: back to step 3's ranges, [m, kept count], and select the kept seats.
	var sp span
	for i := range cs {
		c := &cs[i]
		c.base, c.lim, c.s = c.m, c.s, c.m
		sp.count(c)
	}
	got := d.selectAll(cs, left, sp)
	for i := range cs {
		cs[i].kept = cs[i].s - cs[i].m
	}
	return left - got, span{}, false
}

// add is step 4: one seat at a time to the first seat in the order among candidates below hi
// with a positive weight. It returns the replicas left.
func (d *divider) add(cs []cand, left int64) int64 {
	if left <= 0 {
		return left // nothing to give (no step after this one reads base and lim)
	}
	sp := span{plain: true, summed: true}
	for i := range cs {
		c := &cs[i]
		c.base, c.lim = stepRange(c.s, c.w, c.hi)
		sp.count(c)
		sp.sum(c)
	}
	return d.give(cs, left, sp)
}

// give is step 4 on records whose ranges are set and counted in sp.
func (d *divider) give(cs []cand, left int64, sp span) int64 {
	if left <= 0 {
		return left
	}
	return left - d.selectAll(cs, left, sp)
}

// keptCount is a candidate's count with its cur running replicas kept: cur clamped to
// [m, hi], m its minimum (step 3).
func keptCount(m, cur, hi int64) int64 {
	return max(m, min(cur, hi))
}

// stepRange is a candidate's range for step 4 from s, its count so far: [s, hi) with a
// positive weight w, empty without.
func stepRange(s int64, w uint64, hi int64) (base, lim int64) {
	if w > 0 {
		return s, hi
	}
	return s, s
}

// span counts the ranges [base, lim) of a selection, as the step that set them went over
// them: the room of the positive and of the zero weights and, when summed, what the
// divisor's estimate needs: the sums of the weights and of the bases of the positive
// weights' ranges that are not empty, and whether every one of those is [0, unbounded).
// keep does not sum (its selections are mostly a handful of seats, which need no estimate):
// estimate then sums for itself.
type span struct {
	room, zeroRoom int64
	wsum, bsum     float64
	plain, summed  bool
}

// count adds c's range to the rooms.
func (sp *span) count(c *cand) {
	if c.w == 0 {
		sp.zeroRoom = satAdd(sp.zeroRoom, c.lim-c.base)
	} else {
		sp.room = satAdd(sp.room, c.lim-c.base)
	}
}

// sum adds c's range to the sums; summed must be true and plain start true.
func (sp *span) sum(c *cand) {
	if c.w > 0 && c.base < c.lim {
		sp.wsum += float64(int64(c.w)) // weights never exceed math.MaxInt64
		sp.bsum += float64(c.base)
		sp.plain = sp.plain && c.base == 0 && c.lim == math.MaxInt64
	}
}
