package scheduler

import (
	"fmt"
	"math"

	"github.com/fedkit/fedkit/federation"
)

// Divide divides req.TotalReplicas among req.Clusters. It is a pure function: the same
// request always gives the same plan, whatever the order of the Preferences map, and it
// reads no clock and does no I/O.
//
// Every cluster of the request is in the plan, with 0 when it has no preference (neither its
// own nor "*") or its weight earns it nothing. Replicas that fit nowhere are counted in
// Plan.Unplaced. A request that cannot be planned (see [ErrInvalidRequest]) returns an error
// that names each bad field.
//
// The cost does not depend on TotalReplicas: Webster runs in O(C log C) for C clusters;
// KubeFed, as in KubeFed, takes a round per replica per cluster when replicas are kept.
//
// With Refill (and Rebalance off), Divide divides twice: once with Rebalance on for the fair
// shares, then with the running replicas of the clusters below their share raised to it.
func Divide(req Request) (Plan, error) {
	if err := validate(&req, false); err != nil {
		return Plan{}, err
	}
	if req.Algorithm == "" {
		req.Algorithm = federation.AlgorithmWebster
	}
	if req.Strategy == "" {
		req.Strategy = federation.StrategyWeighted
	}
	if req.Refill && !req.Rebalance {
		return refill(req)
	}
	return divide(&req)
}

// refill is Divide with Refill: the clusters below their fair share (their count with
// Rebalance on) start from it instead of from their running replicas, and the division then
// keeps and trims as usual. Allocation.Kept still counts only replicas that were running.
func refill(req Request) (Plan, error) {
	fair := req
	fair.Rebalance = true
	shares, err := divide(&fair)
	if err != nil {
		return Plan{}, err
	}
	running := req.Clusters
	raised := make([]ClusterState, len(running))
	copy(raised, running)
	share := make([]int64, len(running))
	for i := range raised {
		share[i] = shares.why.s.at(i) // plans keep their records in request order
		if cur := raised[i].Current; share[i] > 0 && (cur == nil || *cur < share[i]) {
			raised[i].Current = &share[i]
		}
	}
	req.Clusters = raised
	plan, err := divide(&req)
	if err != nil {
		return Plan{}, err
	}
	for i := range plan.why.len() {
		var cur int64
		if p := running[i].Current; p != nil {
			cur = *p
		}
		// Never more than the count kept: the column holds it.
		c := plan.why.rec(i)
		plan.why.kept.set(i, min(c.kept, max(0, min(c.s, cur)-c.m)))
	}
	return plan, nil
}

// divide is Divide on a validated request whose algorithm and strategy are set.
func divide(req *Request) (Plan, error) {
	n := len(req.Clusters)
	// One working record per cluster serves the division (see cand); the plan keeps a
	// compact copy of the results (see reasons).
	sc := getScratch(n)
	defer putScratch(sc)
	all := sc.cands
	k, need, err := candidates(req, all)
	if err != nil {
		return Plan{}, err
	}
	cs := all[:k]
	plan := Plan{Total: req.TotalReplicas, Algorithm: req.Algorithm, Strategy: req.Strategy}
	d := divider{clusters: req.Clusters, desc: req.Key != "" && fnv1a(req.Key)%2 == 1, heap: sc.heap}
	defer func() { sc.heap = d.heap }() // keep what the selection grew, for the next division

	moved := k < n // records out of request order: these, and the divisions that sort
	switch {
	case req.Strategy == federation.StrategyDuplicated:
		plan.Overflow = d.duplicate(cs, req.TotalReplicas)
		for _, v := range plan.Overflow {
			plan.Unplaced = satAdd(plan.Unplaced, v)
		}
	case req.Algorithm == federation.AlgorithmKubeFed:
		plan.Unplaced, plan.Overflow, err = d.kubefed(cs, req.TotalReplicas, req.Rebalance, req.Key)
		if err != nil {
			return Plan{}, err
		}
		moved = true
	case req.Spread != nil:
		plan.Unplaced = d.spread(cs, req.TotalReplicas, req.Rebalance, req.Spread)
		plan.Overflow = d.overflow(cs, plan.Unplaced)
		moved = true
	case req.Strategy == federation.StrategyCostOptimized:
		plan.Unplaced = d.cheapest(cs, req.TotalReplicas, req.Rebalance)
		plan.Overflow = d.overflow(cs, plan.Unplaced)
		moved = true
	default:
		left := req.TotalReplicas - need // step 2 as candidates left it: every minimum in full
		if need > req.TotalReplicas {
			left = d.mins(cs, req.TotalReplicas) // not enough for all: the order decides
		}
		plan.Unplaced = d.websterFrom(cs, left, req.Rebalance)
		d.bounds(cs, plan.Unplaced)
		plan.Overflow = d.overflow(cs, plan.Unplaced)
	}
	var used colBits // for the plan's reasons
	for i := range cs {
		c := &cs[i]
		if c.bound && c.by == Unbounded {
			c.by, c.limit = c.hiBy, c.s
		}
		used.add(c)
	}
	if moved {
		inRequestOrder(all)
	}

	// Duplicate names are found here, while the plan's map is built.
	plan.Replicas = make(map[string]int64, n)
	names := make([]string, n)
	for i := range req.Clusters {
		name := req.Clusters[i].Name
		names[i] = name
		plan.Replicas[name] = all[i].s
	}
	if len(plan.Replicas) != n {
		return Plan{}, invalid(req)
	}
	plan.why, plan.names = newReasons(all, &used), names
	if req.Spread != nil {
		plan.domains = make([]string, n)
		for i := range req.Clusters {
			plan.domains[i] = req.Clusters[i].Domain
		}
	}
	return plan, nil
}

// inRequestOrder puts every record back at its cluster's index in the request, in O(n)
// swaps: candidates moved the clusters without a preference to the end, and some divisions
// sort the candidates.
func inRequestOrder(all []cand) {
	for i := range all {
		for j := int(all[i].idx); j != i; j = int(all[i].idx) {
			all[i], all[j] = all[j], all[i] // record j reaches its place; i gets another
		}
	}
}

// webster is the Webster division of total among cs (steps 2 to 4 of doc.go's definition);
// it returns the replicas left unplaced.
func (d *divider) webster(cs []cand, total int64, rebalance bool) int64 {
	return d.websterFrom(cs, d.mins(cs, total), rebalance)
}

// websterFrom is webster once step 2 gave the minimums, with left replicas left.
func (d *divider) websterFrom(cs []cand, left int64, rebalance bool) int64 {
	if !rebalance {
		left = d.keep(cs, left)
	}
	return d.add(cs, left)
}

// candidates fills all, one record per request cluster, and returns how many have a
// preference: their records come first, in request order, with their bounds and effective
// weights; the others follow in any order, marked NoPreference (Divide puts them back).
//
// It also gives each candidate its minimum in full, min(lo, hi), as step 2 does when the
// total covers them all, and returns need, their sum: the Webster division then skips
// step 2's pass in that common case. Every other division sets m and s itself.
func candidates(req *Request, all []cand) (k int, need int64, err error) {
	lk := newPrefLookup(req.Preferences)
	if lk.hasWild && !goodPreference(&lk.wild) {
		return 0, 0, invalid(req)
	}
	none := len(all) // candidates go to the front (from k = 0), the others to the back
	positive := false
	var wsum uint64
	for i := range req.Clusters {
		c := &req.Clusters[i]
		p, src, good := lk.wild, lk.wildSrc, true
		if !lk.onlyWild {
			p, src, good = lk.find(c.Name)
		}
		switch {
		case !good:
			return 0, 0, invalid(req)
		case src == NoPreference:
			none--
			all[none] = cand{idx: int32(i)} // pref NoPreference, the zero value
			continue
		}
		r := &all[k] // reused from an earlier division: fill sets every field
		k++
		r.fill(int32(i), c, &p, src)
		r.w = weightOf(req.Strategy, c, &p)
		need = satAdd(need, r.m)
		if wsum += r.w; wsum > math.MaxInt64 && req.Algorithm == federation.AlgorithmKubeFed {
			return 0, 0, fmt.Errorf("%w: spec.clusters: Invalid value: the weights' sum overflows int64", ErrInvalidRequest)
		}
		positive = positive || r.w > 0
	}
	// Entries for clusters not in the request were not looked up: check them too (a bad
	// preference is an error wherever it is). A duplicate name counts twice here; that is
	// only a wasted scan, and the duplicate is reported later.
	if lk.unchecked() {
		for _, p := range req.Preferences {
			if !goodPreference(&p) {
				return 0, 0, invalid(req)
			}
		}
	}
	if !positive && req.Algorithm == federation.AlgorithmWebster {
		// Every weight 0 (or no capacity known): all count as 1.
		for i := range all[:k] {
			all[i].w = 1
		}
	}
	return k, need, nil
}

// prefLookup finds each cluster's preference: its own entry, else the "*" entry.
type prefLookup struct {
	prefs    map[string]federation.ClusterPreferences
	wild     federation.ClusterPreferences // the "*" entry; weight 1 when there are no entries
	hasWild  bool
	wildSrc  Source // WildcardPreference, or NoPreference without a "*" entry
	onlyWild bool   // no cluster has its own entry: skip the lookups
	own      int    // own entries looked up and checked
}

func newPrefLookup(prefs map[string]federation.ClusterPreferences) prefLookup {
	l := prefLookup{prefs: prefs}
	l.wild, l.hasWild = prefs[federation.WildcardCluster]
	if len(prefs) == 0 {
		l.wild, l.hasWild = federation.ClusterPreferences{Weight: 1}, true
	}
	l.onlyWild = l.hasWild && len(prefs) <= 1
	if l.hasWild {
		l.wildSrc = WildcardPreference
	}
	return l
}

// find returns cluster name's preference and where it comes from (NoPreference: none), and
// false when its own entry is invalid. With onlyWild, the "*" entry is every cluster's:
// candidates takes it without a call.
func (l *prefLookup) find(name string) (federation.ClusterPreferences, Source, bool) {
	if p, ok := l.prefs[name]; ok {
		l.own++
		return p, OwnPreference, goodPreference(&p)
	}
	return l.wild, l.wildSrc, true
}

// unchecked reports whether some entry was not looked up: a cluster not in the request.
func (l *prefLookup) unchecked() bool {
	n := len(l.prefs)
	if l.hasWild && n > 0 {
		return l.own != n-1
	}
	return !l.hasWild && l.own != n
}

// fill sets every field of r, the candidate for request cluster c at index i, whose
// preference p comes from src, but its weight: its bounds and its minimum in full
// (min(lo, hi)).
func (r *cand) fill(i int32, c *ClusterState, p *federation.ClusterPreferences, src Source) {
	*r = cand{idx: i, pref: src, hi: math.MaxInt64, max: math.MaxInt64}
	if p.MinReplicas != nil {
		r.lo = *p.MinReplicas
	}
	if p.MaxReplicas != nil {
		r.max = *p.MaxReplicas
		r.hi, r.hiBy = r.max, MaxReplicas
	}
	if c.Capacity != nil && *c.Capacity < r.hi {
		r.hi, r.hiBy = *c.Capacity, Capacity
	}
	r.m = min(r.lo, r.hi)
	r.s = r.m
}

// weightOf is a candidate's effective weight: its capacity under CapacityWeighted (0 when
// unknown), else its preference's weight.
func weightOf(strategy federation.Strategy, c *ClusterState, p *federation.ClusterPreferences) uint64 {
	if strategy != federation.StrategyCapacityWeighted {
		return uint64(p.Weight)
	}
	if c.Capacity != nil {
		return uint64(*c.Capacity)
	}
	return 0
}

// bounds marks the clusters whose hi held them back: they sit at hi and either their
// minimum was above it, replicas are unplaced, or their next seat would have come before
// the last seat given above anyone's minimum.
func (d *divider) bounds(cs []cand, unplaced int64) {
	atBound := false
	for i := range cs {
		atBound = atBound || (cs[i].hiBy != Unbounded && cs[i].s == cs[i].hi)
	}
	if !atBound {
		return
	}
	var cut *cand
	var cutK int64
	for i := range cs {
		c := &cs[i]
		if c.s > c.m && (cut == nil || d.before(cut, cutK, c, c.s-1)) {
			cut, cutK = c, c.s-1
		}
	}
	for i := range cs {
		c := &cs[i]
		if c.hiBy == Unbounded || c.s != c.hi {
			continue
		}
		c.bound = c.lo > c.hi ||
			(c.w > 0 && (unplaced > 0 || (cut != nil && d.before(c, c.hi, cut, cutK))))
	}
}

// overflow divides the unplaced replicas among the clusters that capacity, and not their
// maxReplicas, held back: where more room would have taken them.
func (d *divider) overflow(cs []cand, unplaced int64) map[string]int64 {
	if unplaced <= 0 {
		return nil
	}
	var held []cand
	for i := range cs {
		c := cs[i]
		if c.hiBy == Capacity && c.s == c.hi && c.w > 0 && c.hi < c.max {
			c.hi = c.max
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		return nil
	}
	start := make([]int64, len(held))
	for i := range held {
		start[i] = held[i].s
	}
	d.add(held, unplaced)
	out := make(map[string]int64, len(held))
	for i := range held {
		if v := held[i].s - start[i]; v > 0 {
			out[d.name(&held[i])] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
