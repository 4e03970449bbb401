package scheduler

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
)

// kubefed is KubeFed's replica planner (pkg/controller/util/planner/planner.go), step by step,
// so that a plan computed here equals the one KubeFed computed for the same input:
//
//  1. Candidates sorted by weight descending, then FNV-1 32-bit hash of name+key ascending.
//  2. Minimums in that order, capped by what is left and by capacity.
//  3. Rebalance off: running replicas kept, capped by max, capacity and what is left.
//  4. Rounds: every cluster still in play gets ceil(remaining·weight/weightSum) (kept
//     replicas count toward it), capped by max (the cluster leaves the rounds) and by
//     capacity (the excess is overflow, and the cluster leaves the rounds), until a round
//     changes nothing or nothing is left.
//  5. Rebalance off: each overflow is cut to what is left and dropped when not positive.
//
// Two deliberate differences, both where KubeFed's own result is accidental: equal weight
// and hash (an FNV collision) fall back to the name, where KubeFed's sort.Sort kept whatever
// order its input had; and remaining·weight is computed in 128 bits, where KubeFed's int64
// product wraps around (weights times replicas above 2^63).
//
// Two differences in cost, none in result: runs of rounds that only drain kept replicas
// (KubeFed loops about R/C times when the total moves by one with rebalance off) are applied
// in one step, and a request that would still need more than kubefedBudget steps (kept
// replicas draining while weights are orders of magnitude apart, where KubeFed spins) gets
// an error instead of a hang.
func (d *divider) kubefed(cs []cand, total int64, rebalance bool, key string) (left int64, overflow map[string]int64, err error) {
	d.kubefedOrder(cs, key)
	r := kubefedRun{d: d, cs: cs, left: total, prealloc: make([]int64, len(cs))}
	r.mins()
	if !rebalance {
		r.keep()
	}
	if err := r.rounds(); err != nil {
		return 0, nil, err
	}
	if !rebalance {
		r.trimOverflow()
	}
	if len(r.overflow) == 0 {
		r.overflow = nil
	}
	return r.left, r.overflow, nil
}

// kubefedOrder sorts cs as step 1 does: weight descending, then the FNV-1 hash of name+key
// ascending, then the name.
func (d *divider) kubefedOrder(cs []cand, key string) {
	hash := make([]uint32, len(d.clusters)) // by cand.idx
	for i := range cs {
		hash[cs[i].idx] = fnv1Pair(d.name(&cs[i]), key)
	}
	sort.Slice(cs, func(x, y int) bool {
		a, b := &cs[x], &cs[y]
		if a.w != b.w {
			return a.w > b.w
		}
		if ha, hb := hash[a.idx], hash[b.idx]; ha != hb {
			return ha < hb
		}
		return d.name(a) < d.name(b)
	})
}

// kubefedRun is one run of KubeFed's planner over candidates in step 1's order.
type kubefedRun struct {
	d        *divider
	cs       []cand
	left     int64            // replicas not yet given
	prealloc []int64          // replicas kept in step 3 and not yet counted, by position in cs
	overflow map[string]int64 // what capacity cut off, by cluster name
}

// capacity returns c's capacity, and false when it has none.
func (r *kubefedRun) capacity(c *cand) (int64, bool) {
	if p := r.d.clusters[c.idx].Capacity; p != nil {
		return *p, true
	}
	return 0, false
}

// mins is step 2: each candidate's minimum, in order, capped by what is left and capacity.
func (r *kubefedRun) mins() {
	for i := range r.cs {
		c := &r.cs[i]
		m := min(c.lo, r.left)
		if cp, ok := r.capacity(c); ok {
			m = min(m, cp)
		}
		c.m, c.s = m, m
		r.left -= m
	}
}

// keep is step 3, rebalance off: running replicas kept, capped by max, capacity and what is
// left. They are preallocated: the rounds count them towards each share.
func (r *kubefedRun) keep() {
	for i := range r.cs {
		c := &r.cs[i]
		cur, ok := r.d.current(c)
		if !ok || cur <= c.s {
			continue
		}
		target := min(cur, c.max) // max is math.MaxInt64 when there is none
		if cp, ok := r.capacity(c); ok {
			target = min(target, cp)
		}
		extra := max(0, min(target-c.s, r.left))
		r.left -= extra
		r.prealloc[i], c.kept = extra, extra
		c.s += extra
	}
}

// rounds is step 4: rounds until one changes nothing or nothing is left, within
// kubefedBudget.
func (r *kubefedRun) rounds() error {
	active := make([]int32, len(r.cs))
	for i := range active {
		active[i] = int32(i)
	}
	budget := int64(kubefedBudget)
	for modified := true; modified && r.left > 0; {
		var wsum uint64 // Divide checked that the weights' sum fits in an int64
		for _, i := range active {
			wsum += r.cs[i].w
		}
		if budget -= int64(len(active)) + 1; budget < 0 {
			return fmt.Errorf("%w: spec.algorithm: KubeFed's planner needs more than %d steps for this request "+
				"(replicas kept in some clusters while weights are far apart); use Webster", ErrInvalidRequest, kubefedBudget)
		}
		if wsum == 0 {
			return nil // KubeFed's round stops before keeping anyone
		}
		skipAbsorbingRounds(r.cs, active, r.prealloc, uint64(r.left), wsum, r.left)
		active, modified = r.round(active, wsum)
	}
	return nil
}

// round gives every cluster still in play its share of what is left, ceil(left·w/wsum),
// kept replicas counting toward it, and returns those still in play (active, reused) and
// whether anything changed.
func (r *kubefedRun) round(active []int32, wsum uint64) ([]int32, bool) {
	cs, prealloc, left := r.cs, r.prealloc, r.left
	dist := uint64(left)
	modified := false
	next := active[:0] // in place: writes never pass reads
	for _, i := range active {
		c := &cs[i]
		start := c.s
		extra := min(ceilMulDiv(dist, c.w, wsum), left)
		used := min(extra, prealloc[i])
		prealloc[i] -= used
		t, full := start+extra-used, false
		if t > c.hi { // hi is min(max, capacity) (candidates): one test for both
			t, full = r.capped(c, t)
		}
		if !full {
			next = append(next, i)
		}
		left -= t - start
		c.s = t
		modified = modified || used > 0 || t > start
	}
	r.left = left
	return next, modified
}

// capped caps c's new count t by its max, then by its capacity (the excess is overflow), and
// reports whether either held it: the cluster then leaves the rounds.
func (r *kubefedRun) capped(c *cand, t int64) (int64, bool) {
	full := false
	if t > c.max {
		t, full = c.max, true
		c.bound, c.hiBy = true, MaxReplicas
	}
	if cp, ok := r.capacity(c); ok && t > cp {
		if r.overflow == nil {
			r.overflow = make(map[string]int64)
		}
		r.overflow[r.d.name(c)] = t - cp
		t, full = cp, true
		c.bound, c.hiBy = true, Capacity
	}
	return t, full
}

// trimOverflow is step 5, rebalance off: each overflow is cut to what is left and dropped
// when not positive.
func (r *kubefedRun) trimOverflow() {
	for name, v := range r.overflow {
		if v = min(v, r.left); v > 0 {
			r.overflow[name] = v
		} else {
			delete(r.overflow, name)
		}
	}
}

// kubefedBudget bounds the work of the KubeFed rounds, in cluster steps: about 50ms. Rounds
// that only use up kept replicas are skipped in bulk (see skipAbsorbingRounds), so realistic
// requests stay far below it; what remains above it are requests where every round places
// a replica or two while kept replicas drain (weights many orders of magnitude apart), on
// which KubeFed itself would spin.
const kubefedBudget = 10_000_000

// skipAbsorbingRounds applies in one step the run of identical rounds that only use up kept
// replicas: when every cluster's share of the round is covered by its preallocation, the
// round changes nothing but the preallocations, so the next round computes the same shares.
// r such rounds subtract r·share from each preallocation, exactly as r loops would.
func skipAbsorbingRounds(cs []cand, active []int32, prealloc []int64, dist, wsum uint64, left int64) {
	r := int64(math.MaxInt64)
	for _, i := range active {
		extra := min(ceilMulDiv(dist, cs[i].w, wsum), left)
		if extra > prealloc[i] {
			return // this round places replicas: run it normally
		}
		if extra > 0 {
			r = min(r, prealloc[i]/extra)
		}
	}
	if r == math.MaxInt64 || r <= 1 {
		return // nothing to absorb, or a single round: let the loop do it
	}
	r-- // leave the last absorbing round to the loop, which also sets modified
	for _, i := range active {
		prealloc[i] -= r * min(ceilMulDiv(dist, cs[i].w, wsum), left)
	}
}

// ceilMulDiv returns min(ceil(a·b/c), 2^63-1) for c > 0, computed exactly in 128 bits.
func ceilMulDiv(a, b, c uint64) int64 {
	hi, lo := bits.Mul64(a, b)
	var borrow uint64
	// ceil(x/c) = floor((x + c - 1)/c)
	lo, borrow = bits.Add64(lo, c-1, 0)
	hi += borrow
	if hi >= c {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, c)
	if q > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(q)
}

// fnv1Pair is FNV-1 32-bit (hash/fnv.New32, not 1a) of a's bytes followed by b's, without
// the allocations of hash/fnv.
func fnv1Pair(a, b string) uint32 {
	const (
		offset32 = 2166136261
		prime32  = 16777619
	)
	h := uint32(offset32)
	for i := 0; i < len(a); i++ {
		h *= prime32
		h ^= uint32(a[i])
	}
	for i := 0; i < len(b); i++ {
		h *= prime32
		h ^= uint32(b[i])
	}
	return h
}

// fnv1a is FNV-1a 32-bit of s: its parity picks Webster's tie order.
func fnv1a(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
