package scheduler

import (
	"math"
	"sort"
)

// duplicate gives every candidate the whole total, capped by its maximum and capacity. The
// overflow is what capacity cut off.
func (d *divider) duplicate(cs []cand, total int64) map[string]int64 {
	var overflow map[string]int64
	for i := range cs {
		c := &cs[i]
		c.m, c.s = 0, min(total, c.hi) // no minimum: every cluster gets the total
		if c.s < total {
			c.bound = true
			if c.hiBy == Capacity {
				if overflow == nil {
					overflow = make(map[string]int64)
				}
				overflow[d.name(c)] = min(total, c.max) - c.s
			}
		}
	}
	return overflow
}

// cheapest is CostOptimized: minimums first as always, then clusters grouped in tiers of
// equal cost, cheapest first (unknown cost last). Kept replicas stay from the cheapest tier
// up while the total allows; the rest is given tier by tier, by Webster within a tier. It
// returns the replicas left unplaced.
func (d *divider) cheapest(cs []cand, total int64, rebalance bool) int64 {
	sort.SliceStable(cs, func(x, y int) bool { return d.cheaper(&cs[x], &cs[y]) })
	left := d.mins(cs, total)
	if !rebalance {
		for _, t := range d.tiers(cs) {
			left, _, _ = d.keep(t, left) // add sets its ranges below, tier by tier
		}
	}
	ts := d.tiers(cs)
	for _, t := range ts {
		left = d.add(t, left)
	}
	// A cluster at its bound was held back if replicas went unplaced or to a dearer tier.
	spilled := left
	for i := len(ts) - 1; i >= 0; i-- {
		d.bounds(ts[i], spilled)
		for j := range ts[i] {
			if ts[i][j].s > ts[i][j].m {
				spilled = 1
			}
		}
	}
	return left
}

// cheaper reports whether a costs less than b; an unknown cost comes after every known one.
func (d *divider) cheaper(a, b *cand) bool {
	ca, cb := d.clusters[a.idx].Cost, d.clusters[b.idx].Cost
	if (ca == nil) != (cb == nil) {
		return cb == nil
	}
	return ca != nil && *ca < *cb
}

// tiers splits cs, sorted by cost, into runs of equal cost.
func (d *divider) tiers(cs []cand) [][]cand {
	var out [][]cand
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && !d.cheaper(&cs[i], &cs[j]) {
			j++
		}
		out = append(out, cs[i:j])
		i = j
	}
	return out
}

// spread divides over failure domains, then within each domain. A domain weighs the sum of
// its clusters' weights; its bounds are the sums of theirs, further capped by an even share
// plus MaxSkew (but never below its clusters' minimums). The first MinDomains domains in
// weight order get at least one replica. It returns the replicas left unplaced.
func (d *divider) spread(cs []cand, total int64, rebalance bool, sp *Spread) int64 {
	sort.SliceStable(cs, func(x, y int) bool { return d.domain(&cs[x]) < d.domain(&cs[y]) })
	left := d.mins(cs, total)
	groups := d.domains(cs)
	if len(groups) == 0 {
		return total
	}
	dc, dd := d.domainCands(groups, total, sp)
	if sp.MinDomains > 0 {
		dd.coverDomains(dc, left, sp.MinDomains)
	}
	du := dd.webster(dc, total, rebalance)
	dd.bounds(dc, du)
	return total - d.withinDomains(groups, dc, du, rebalance)
}

// domain is c's failure domain.
func (d *divider) domain(c *cand) string { return d.clusters[c.idx].Domain }

// domains splits cs, sorted by domain, into one run per domain.
func (d *divider) domains(cs []cand) [][]cand {
	var groups [][]cand
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && d.domain(&cs[j]) == d.domain(&cs[i]) {
			j++
		}
		groups = append(groups, cs[i:j])
		i = j
	}
	return groups
}

// domainCands returns one candidate per domain, and the divider among them. A domain weighs
// the sum of its clusters' weights; its minimum is the sum of theirs; its bound the sum of
// theirs, capped by an even share plus MaxSkew (never below its minimum). Its current
// replicas are its clusters' (each clamped to its bounds), unknown when none of theirs is
// known.
func (d *divider) domainCands(groups [][]cand, total int64, sp *Spread) ([]cand, *divider) {
	skewCap := int64(math.MaxInt64)
	if sp.MaxSkew > 0 {
		skewCap = satAdd(total/int64(len(groups)), sp.MaxSkew)
	}
	dc := make([]cand, len(groups))
	dd := &divider{names: make([]string, len(groups)), cur: make([]int64, len(groups)), desc: d.desc}
	for j, g := range groups {
		c := &dc[j]
		dd.names[j] = d.domain(&g[0])
		c.idx = int32(j)
		var sumHi int64
		cur := int64(-1)
		for i := range g {
			k := &g[i]
			c.w = min(c.w+k.w, math.MaxInt64)
			c.lo += k.m
			sumHi = satAdd(sumHi, k.hi)
			if v, ok := d.current(k); ok {
				cur = satAdd(max(cur, 0), max(k.m, min(v, k.hi)))
			}
		}
		dd.cur[j] = cur
		c.hi, c.hiBy, c.max = sumHi, Unbounded, math.MaxInt64
		if capped := max(skewCap, c.lo); capped < sumHi {
			c.hi, c.hiBy = capped, DomainSkew
		}
	}
	return dc, dd
}

// coverDomains is MinDomains: a replica, of the left ones, for each of the first domains
// by weight that have none yet, until minDomains have some.
func (d *divider) coverDomains(dc []cand, left int64, minDomains int32) {
	order := make([]int, len(dc))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(x, y int) bool {
		a, b := &dc[order[x]], &dc[order[y]]
		if a.w != b.w {
			return a.w > b.w
		}
		return d.nameFirst(d.name(a), d.name(b))
	})
	covered := 0
	for _, j := range order {
		if dc[j].lo > 0 {
			covered++
		}
	}
	for _, j := range order {
		if covered >= int(minDomains) || left == 0 {
			break
		}
		if c := &dc[j]; c.lo == 0 && c.hi > 0 && c.w > 0 {
			c.lo, left = 1, left-1
			covered++
		}
	}
}

// withinDomains divides each domain's replicas (dc[j].s) among its clusters and returns the
// replicas placed. A full domain passes the unplaced replicas du on to its clusters' bounds;
// a cluster held back only by its domain's bound is marked DomainSkew.
func (d *divider) withinDomains(groups [][]cand, dc []cand, du int64, rebalance bool) int64 {
	var placed int64
	for j, g := range groups {
		for i := range g {
			g[i].lo = g[i].m // the minimums were settled across domains
		}
		d.webster(g, dc[j].s, rebalance)
		var inner int64
		if dc[j].hiBy == Unbounded && dc[j].s == dc[j].hi {
			inner = du
		}
		d.bounds(g, inner)
		for i := range g {
			placed += g[i].s
			if dc[j].bound && !g[i].bound && g[i].w > 0 {
				g[i].by, g[i].limit = DomainSkew, dc[j].hi
			}
		}
	}
	return placed
}
