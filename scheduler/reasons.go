package scheduler

import (
	"encoding/binary"
	"math/bits"
)

// reasons is what a [Plan] keeps of its division: per cluster of the request, in request
// order, the count and the reasons for it, column by column, each column in the fewest
// bytes that hold its largest value (see column), all of them in one allocation that holds
// no pointer. A plan of a thousand clusters of about a hundred replicas each, weights below
// 256 and no minimums, keeps 4 kB beside its Replicas map, where the division's working
// records (cand, 88 bytes a cluster) would be 88 kB.
//
// Why it matters: at that size a division computes in tens of microseconds, and the memory
// it leaves behind costs as much again, in the allocator, the garbage collector's cycles it
// brings forward, and the pages the processor has to fault back in.
type reasons struct {
	s    column // the cluster's replicas
	w    column // the weight the division used (cand.w, which never exceeds math.MaxInt64)
	m    column // replicas given for minReplicas
	kept column // running replicas kept beyond m
	// limit is Allocation.Limit, stored only when some cluster's differs from the rule
	// impliedLimit applies; with none stored every entry reads 0 and the rule applies.
	limit   column
	flags   []uint8 // Source | Bound<<4
	limited bool    // limit is stored
}

// newReasons copies the results of a division from its records, one per request cluster in
// request order; used tells the bits their columns need (see colBits), and vals is
// scratch for n values. Column by column: a field of every record gathered into vals, then
// packed at the column's width, two tight loops where a record at a time would choose the
// width of each of its values.
func newReasons(all []cand, used *colBits, vals []int64) reasons {
	n := len(all)
	limit := used.limit
	if !used.limited {
		limit = 0
	}
	ws, ww, wm, wk, wl := widthOf(used.s), widthOf(used.w), widthOf(used.m), widthOf(used.kept), widthOf(limit)
	// One allocation: the flags, then each column.
	buf := make([]byte, n*(1+ws+ww+wm+wk+wl))
	take := func(width int) column {
		c := column{b: buf[: n*width : n*width], width: uint8(width)}
		buf = buf[n*width:]
		return c
	}
	r := reasons{flags: buf[:n:n], limited: used.limited}
	buf = buf[n:]
	r.s, r.w, r.m, r.kept, r.limit = take(ws), take(ww), take(wm), take(wk), take(wl)
	for i := range all {
		r.flags[i] = uint8(all[i].pref) | uint8(all[i].by)<<4
	}
	vals = vals[:n]
	for _, col := range []struct {
		c column
		f recField
	}{{r.s, fieldS}, {r.w, fieldW}, {r.m, fieldM}, {r.kept, fieldKept}, {r.limit, fieldLimit}} {
		if col.c.width > 0 { // a column of width 0 holds only 0s
			gather(vals, all, col.f)
			col.c.pack(vals)
		}
	}
	return r
}

// recField names one field of cand that a column holds.
type recField uint8

const (
	fieldS recField = iota
	fieldW
	fieldM
	fieldKept
	fieldLimit
)

// gather sets vals[i] to field f of all[i].
func gather(vals []int64, all []cand, f recField) {
	vals = vals[:len(all)]
	switch f {
	case fieldS:
		for i := range all {
			vals[i] = all[i].s
		}
	case fieldW:
		for i := range all {
			vals[i] = int64(all[i].w)
		}
	case fieldM:
		for i := range all {
			vals[i] = all[i].m
		}
	case fieldKept:
		for i := range all {
			vals[i] = all[i].kept
		}
	case fieldLimit:
		for i := range all {
			vals[i] = all[i].limit
		}
	}
}

// colBits gathers, record by record, what newReasons needs to know before it allocates:
// the bits each column's values use, OR-ed together, and whether some limit is not the one
// impliedLimit gives. divide gathers them in a pass it makes anyway; the records of clusters
// without a preference are all zeros and need not be added.
type colBits struct {
	s, w, m, kept, limit uint64
	limited              bool
}

// add adds one record.
func (b *colBits) add(c *cand) {
	b.s |= uint64(c.s)
	b.w |= c.w
	b.m |= uint64(c.m)
	b.kept |= uint64(c.kept)
	b.limit |= uint64(c.limit)
	if c.by != Unbounded || c.limit != 0 { // unbounded, impliedLimit is 0: nothing to store
		v, ok := impliedLimit(c.by, c.s)
		b.limited = b.limited || !ok || c.limit != v
	}
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
func (r *reasons) len() int { return len(r.flags) }

// rec returns the i-th cluster's record.
func (r *reasons) rec(i int) rec {
	c := rec{
		s:    r.s.at(i),
		m:    r.m.at(i),
		kept: r.kept.at(i),
		w:    uint64(r.w.at(i)),
		pref: Source(r.flags[i] & 0xf),
		by:   Bound(r.flags[i] >> 4),
	}
	if r.limited {
		c.limit = r.limit.at(i)
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

// column holds one int64 per cluster in width bytes each (little-endian): 1, 2, 4 or 8, the
// fewest that hold every value, or 0 when every value is 0. A negative value (none of the
// plan's is) takes all 8, so every value reads back as it was set.
type column struct {
	b     []byte
	width uint8
}

// widthOf returns the bytes per value of a column whose values OR-ed together are or.
func widthOf(or uint64) int {
	switch n := bits.Len64(or); {
	case n == 0:
		return 0
	case n <= 8:
		return 1
	case n <= 16:
		return 2
	case n <= 32:
		return 4
	}
	return 8
}

// at returns the i-th value.
func (c column) at(i int) int64 {
	switch c.width {
	case 1:
		return int64(c.b[i])
	case 2:
		return int64(binary.LittleEndian.Uint16(c.b[2*i:]))
	case 4:
		return int64(binary.LittleEndian.Uint32(c.b[4*i:]))
	case 8:
		return int64(binary.LittleEndian.Uint64(c.b[8*i:]))
	}
	return 0
}

// pack sets the column to vals, which its width must hold.
func (c column) pack(vals []int64) {
	switch c.width {
	case 1:
		b := c.b[:len(vals)]
		for i, v := range vals {
			b[i] = uint8(v)
		}
	case 2:
		b := c.b[:2*len(vals)]
		for i, v := range vals {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
	case 4:
		b := c.b[:4*len(vals)]
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
		}
	case 8:
		b := c.b[:8*len(vals)]
		for i, v := range vals {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
	}
}

// set sets the i-th value to v, which the column's width must hold (as newReasons chose
// it, or any value between 0 and one already there).
func (c column) set(i int, v int64) {
	switch c.width {
	case 1:
		c.b[i] = uint8(v)
	case 2:
		binary.LittleEndian.PutUint16(c.b[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(c.b[4*i:], uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(c.b[8*i:], uint64(v))
	}
}
