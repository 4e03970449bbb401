package scheduler

// reasons is what a [Plan] keeps of its division: per cluster of the request, in request
// order, the count and the reasons for it, column by column. A column that would hold only
// zeros is not stored (minimums without any minReplicas, kept replicas with Rebalance on,
// limits that are the count itself), so a plan of a thousand clusters costs about 17 kB
// beside its Replicas map, where a copy of the division's working records (cand, 88 bytes a
// cluster) cost 88 kB. Fresh memory is what a large division spends most on after its maps:
// each kilobyte a plan keeps is one the allocator has to find and the processor to fault in.
// Nothing here holds a pointer, so the garbage collector does not scan it.
type reasons struct {
	s    []int64 // the cluster's replicas
	w    []int64 // the weight the division used (cand.w, which never exceeds math.MaxInt64)
	m    []int64 // replicas given for minReplicas; nil when all are 0
	kept []int64 // running replicas kept beyond m; nil when all are 0
	// limit is Allocation.Limit, stored only when some cluster's differs from the rule
	// limitOf applies: a bound's value is the count it held the cluster at (MaxReplicas,
	// Capacity), the domain's cap (DomainSkew, which needs the column), 0 when unbounded.
	limit []int64
	flags []uint8 // Source | Bound<<4
}

// newReasons copies the results of a division from its records, one per request cluster in
// request order.
func newReasons(all []cand) reasons {
	n := len(all)
	var hasM, hasKept, hasLimit bool
	for i := range all {
		c := &all[i]
		hasM = hasM || c.m != 0
		hasKept = hasKept || c.kept != 0
		v, ok := impliedLimit(c.by, c.s)
		hasLimit = hasLimit || !ok || c.limit != v
	}
	cols := 2
	for _, has := range []bool{hasM, hasKept, hasLimit} {
		if has {
			cols++
		}
	}
	// One allocation for every column of int64s: the plan's memory in one piece.
	buf := make([]int64, cols*n)
	next := func() []int64 {
		col := buf[:n:n]
		buf = buf[n:]
		return col
	}
	r := reasons{s: next(), w: next(), flags: make([]uint8, n)}
	if hasM {
		r.m = next()
	}
	if hasKept {
		r.kept = next()
	}
	if hasLimit {
		r.limit = next()
	}
	for i := range all {
		c := &all[i]
		r.s[i], r.w[i], r.flags[i] = c.s, int64(c.w), uint8(c.pref)|uint8(c.by)<<4
		if r.m != nil {
			r.m[i] = c.m
		}
		if r.kept != nil {
			r.kept[i] = c.kept
		}
		if r.limit != nil {
			r.limit[i] = c.limit
		}
	}
	return r
}

// impliedLimit is a cluster's Allocation.Limit when the plan stores no limit column: the
// count a bound held the cluster at, or 0 when none did. It returns false for DomainSkew,
// whose limit, the domain's cap, is not the cluster's count: a plan with one stores the
// column.
func impliedLimit(by Bound, s int64) (int64, bool) {
	switch by {
	case Unbounded:
		return 0, true
	case DomainSkew:
		return 0, false
	}
	return s, true
}

// len returns the number of clusters.
func (r *reasons) len() int { return len(r.s) }

// rec returns the i-th cluster's record.
func (r *reasons) rec(i int) rec {
	c := rec{s: r.s[i], w: uint64(r.w[i]), pref: Source(r.flags[i] & 0xf), by: Bound(r.flags[i] >> 4)}
	if r.m != nil {
		c.m = r.m[i]
	}
	if r.kept != nil {
		c.kept = r.kept[i]
	}
	if r.limit != nil {
		c.limit = r.limit[i]
	} else {
		c.limit, _ = impliedLimit(c.by, c.s)
	}
	return c
}

// rec is one cluster's count and its reasons, as [reasons.rec] reads them back.
type rec struct {
	s, m, kept int64  // replicas, of which for minReplicas and kept
	w          uint64 // the weight the division used
	limit      int64  // by's value
	pref       Source
	by         Bound
}
