package scheduler

import "math"

// The last few seats of a selection: after a divisor has counted all but a handful of seats
// (or when only a handful move, as when a total goes one up or down with Rebalance off),
// grow and shrink give or take them one at a time in the exact order of [divider.before],
// with a heap of the few clusters that can take part.

// grow adds n more seats, each the first seat in the order among the clusters below lim.
func (d *divider) grow(cs []cand, n int64) {
	// A max-heap on each cluster's next seat.
	less := func(x, y int32) bool { return d.before(&cs[x], cs[x].s, &cs[y], cs[y].s) }
	var small [fewestSmall]int32
	h := d.fewest(cs, n, true, less, &small)
	if len(h) == 1 { // one cluster takes them all
		c := &cs[h[0]]
		c.s += min(n, c.lim-c.s)
		return
	}
	if int64(len(h)) == n && n > 1 {
		// n clusters for n seats: when none of them has a second seat before the last of
		// their first seats, each gets one (many shares below one replica, or ties).
		last := h[0]
		for _, i := range h[1:] {
			if less(last, i) {
				last = i
			}
		}
		one := true
		for _, i := range h {
			if c := &cs[i]; c.s+1 < c.lim && d.before(c, c.s+1, &cs[last], cs[last].s) {
				one = false
				break
			}
		}
		if one {
			for _, i := range h {
				cs[i].s++
			}
			return
		}
	}
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
	var small [fewestSmall]int32
	h := d.fewest(cs, n, false, less, &small)
	if len(h) == 1 { // one cluster gives them all
		c := &cs[h[0]]
		c.s -= min(n, c.s-c.base)
		return
	}
	if int64(len(h)) == n && n > 1 {
		// n clusters give n seats: when none of them has a second-to-last seat after the
		// first of their last seats, each gives one.
		first := h[0]
		for _, i := range h[1:] {
			if less(first, i) {
				first = i
			}
		}
		one := true
		for _, i := range h {
			if c := &cs[i]; c.s-2 >= c.base && d.before(&cs[first], cs[first].s-1, c, c.s-2) {
				one = false
				break
			}
		}
		if one {
			for _, i := range h {
				cs[i].s--
			}
			return
		}
	}
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

// fewestSmall is the largest n for which fewest filters the clusters by a float key before
// comparing any exactly; larger n select in O(C) with exact comparisons.
const fewestSmall = 32

// keySlack is the relative margin of fewest's float filter. A key, and the products that
// compare with it, are within 8 units in the last place (about 1e-15) of the exact ratios
// they stand for, so clusters whose keys differ by more than keySlack are ordered by their
// keys exactly as by [divider.before].
const keySlack = 1e-9

// fewest returns a heap (first under less at the root) of the at most n eligible clusters
// that come first under less, for n steps of grow (growing: next seats, below lim) or shrink
// (last seats, above base). Only they can take part in n steps: any other cluster's seat
// comes after n seats of theirs. Keeping n of C costs about C comparisons when n is small,
// where a heap of all C would cost 2C and more cache misses.
//
// For a small n the exact comparison (two 128-bit products behind a closure) is left to the
// few clusters that can matter: a float key per cluster, 1/priority of its next seat or the
// priority of its last, finds the n-th smallest key T in one pass. A cluster with a key above
// T·(1+keySlack) has a strictly lower (next) or higher (last) seat priority than n others,
// so it cannot be among the n first; the second pass compares only the rest exactly.
func (d *divider) fewest(cs []cand, n int64, growing bool, less func(x, y int32) bool, small *[fewestSmall]int32) []int32 {
	if n <= fewestSmall {
		h := small[:0]
		if n > 0 {
			h = fewestKeyed(cs, n, growing, less, h)
		}
		heapify(h, less)
		return h
	}
	if int64(cap(d.heap)) < min(int64(len(cs)), n) {
		d.heap = make([]int32, 0, len(cs)) // once per division, not once per append
	}
	h := d.heap[:0]
	for i := range cs {
		if eligible(&cs[i], growing) {
			h = append(h, int32(i))
		}
	}
	if int64(len(h)) > n {
		// Many to keep: select them in O(C) rather than O(C log n).
		nthElement(h, int(n), less)
		h = h[:n]
	}
	heapify(h, less)
	d.heap = h
	return h
}

// fewestKeyed appends to h (with room for n) the at most n eligible clusters that come
// first under less, for 0 < n <= fewestSmall: first the n smallest float keys, then exact
// comparisons among the clusters whose key is close enough (see fewest).
func fewestKeyed(cs []cand, n int64, growing bool, less func(x, y int32) bool, h []int32) []int32 {
	// The n smallest keys, sorted, in a small array. Most clusters fail the first test,
	// key > noteLimit, done as a product (a division costs several times more).
	//
	// The second step compares the clusters whose key is at most limit, the n-th smallest
	// key plus keySlack. The scan notes each cluster whose key is within twice that slack of
	// the n-th smallest key of its time (usually a few dozen: the first n and each new low),
	// and the second step reads only those. That n-th key only falls as the scan goes on,
	// but for rounding (a key that passed `num < top[n-1]·den` may still round to an ulp
	// above top[n-1]), which the second slack covers for up to maxNotedScan clusters; past
	// that, or when too many are noted (ties), the second step reads every cluster again.
	var buf [fewestSmall]float64
	top := buf[:0]
	var noted [fewestNoted]int32
	nn := 0 // len(noted), or fewestNoted+1 once they did not fit
	if len(cs) > maxNotedScan {
		nn = fewestNoted + 1
	}
	noteLimit := math.Inf(1)
	for i := range cs {
		c := &cs[i]
		if !eligible(c, growing) {
			continue
		}
		num, den := seatKey(c, growing)
		if num > noteLimit*den {
			continue // after n others (and so num >= top[n-1]·den: see below)
		}
		if nn < fewestNoted {
			noted[nn] = int32(i)
		}
		nn = min(nn+1, fewestNoted+1)
		if int64(len(top)) == n && num >= top[n-1]*den {
			continue // not among the n smallest keys so far
		}
		k := num / den
		if int64(len(top)) < n {
			top = append(top, k)
		}
		j := len(top) - 1
		for ; j > 0 && top[j-1] > k; j-- {
			top[j] = top[j-1]
		}
		top[j] = k
		if int64(len(top)) == n {
			noteLimit = top[n-1] * (1 + 2*keySlack)
		}
	}
	// top holds the keys of n clusters (whatever the rounding of the tests above), so
	// every cluster with a key above limit comes after n others.
	limit := math.Inf(1) // fewer than n eligible: keep them all
	if int64(len(top)) == n {
		limit = top[n-1] * (1 + keySlack)
	}
	// The exact n first among the clusters the keys let through (usually about n, all of
	// them when the weights tie), in a heap with the last of them at the root.
	after := func(x, y int32) bool { return less(y, x) }
	consider := func(i int) {
		c := &cs[i]
		if num, den := seatKey(c, growing); num > limit*den {
			return
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
	if nn <= fewestNoted {
		for _, i := range noted[:nn] {
			consider(int(i))
		}
		return h
	}
	for i := range cs {
		if eligible(&cs[i], growing) {
			consider(i)
		}
	}
	return h
}

// fewestNoted is how many clusters fewestKeyed's scan notes for its second step before it
// gives up noting and reads them all again.
const fewestNoted = 256

// maxNotedScan is the most clusters for which fewestKeyed notes them: each of them can raise
// the n-th smallest key by an ulp (2^-52 relative) at most, and so many ulps stay below the
// keySlack between the noting bound and limit.
const maxNotedScan = 1 << 20

// eligible reports whether c can take a seat (growing) or give one back.
func eligible(c *cand, growing bool) bool {
	if growing {
		return c.w > 0 && c.s < c.lim
	}
	return c.w > 0 && c.s > c.base
}

// seatKey returns the key num/den (den > 0) that orders eligible clusters for grow (the
// inverse priority of the next seat) or shrink (the priority of the last seat), smaller
// first, as before does up to rounding.
func seatKey(c *cand, growing bool) (num, den float64) {
	w := float64(int64(c.w)) // weights never exceed math.MaxInt64; the int64 conversion is one instruction
	if growing {
		return 2*float64(c.s) + 1, w
	}
	return w, 2*float64(c.s) - 1
}
