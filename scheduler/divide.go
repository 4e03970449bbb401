package scheduler

import (
	"fmt"
	"math"
	"math/bits"

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
	got, err := candidates(req, all)
	if err != nil {
		return Plan{}, err
	}
	k := got.k
	cs := all[:k]
	plan := Plan{Total: req.TotalReplicas, Algorithm: req.Algorithm, Strategy: req.Strategy}
	d := divider{clusters: req.Clusters, desc: req.Key != "" && fnv1a(req.Key)%2 == 1, heap: sc.heap}
	defer func() { sc.heap = d.heap }() // keep what the selection grew, for the next division

	moved := k < n      // records out of request order: these, and the divisions that sort
	countsOnly := false // since candidates, only the counts changed
	switch {
	case plainWebster(req):
		plan.Unplaced, countsOnly = d.websterOf(cs, req.TotalReplicas, req.Rebalance, &got)
		countsOnly = countsOnly && !got.bounded
		if got.bounded {
			d.bounds(cs, plan.Unplaced)
			plan.Overflow = d.overflow(cs, plan.Unplaced)
		}
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
	default: // CostOptimized
		plan.Unplaced = d.cheapest(cs, req.TotalReplicas, req.Rebalance)
		plan.Overflow = d.overflow(cs, plan.Unplaced)
		moved = true
	}
	if moved {
		inRequestOrder(all)
	}

	// One pass in request order builds the plan's map, finds duplicate names (as the map is
	// built), gathers the bits the reasons' columns need, and compares the names with the
	// last plan's (see names).
	var used colBits
	var same bool
	if countsOnly {
		used = colBits{w: got.wor, m: got.mor, kept: got.kor} // as candidates left them
		plan.Replicas, same = countsOf(req.Clusters, all, &used, sc.names)
	} else {
		plan.Replicas, same = settle(req.Clusters, all, &used, sc.names)
	}
	if len(plan.Replicas) != n {
		return Plan{}, invalid(req)
	}
	if !same {
		sc.names = namesOf(req.Clusters)
	}
	plan.why, plan.names = newReasons(all, &used, sc.vals), sc.names
	if req.Spread != nil {
		plan.domains = make([]string, n)
		for i := range req.Clusters {
			plan.domains[i] = req.Clusters[i].Domain
		}
	}
	return plan, nil
}

// settle builds the plan's map from the records, in request order, and gathers the bits
// the reasons' columns need, with the bound each record reports. The records of clusters
// without a preference are all zeros: they add nothing. It also reports whether the
// clusters' names are names, in order.
func settle(clusters []ClusterState, all []cand, used *colBits, names []string) (map[string]int64, bool) {
	replicas := make(map[string]int64, len(all))
	same := len(names) == len(clusters)
	for i := range all {
		c := &all[i]
		if c.bound && c.by == Unbounded {
			c.by, c.limit = c.hiBy, c.s
		}
		used.add(c)
		name := clusters[i].Name
		replicas[name] = c.s
		same = same && names[i] == name
	}
	return replicas, same
}

// countsOf is settle for a division that changed only the counts since candidates, and
// no bound held: used has the other columns' bits already.
func countsOf(clusters []ClusterState, all []cand, used *colBits, names []string) (map[string]int64, bool) {
	replicas := make(map[string]int64, len(all))
	same := len(names) == len(clusters)
	for i := range all {
		s := all[i].s
		used.s |= uint64(s)
		name := clusters[i].Name
		replicas[name] = s
		same = same && names[i] == name
	}
	return replicas, same
}

// namesOf returns the clusters' names, in order: a new slice, which plans share and never
// change (see scratch.names).
func namesOf(clusters []ClusterState) []string {
	names := make([]string, len(clusters))
	for i := range clusters {
		names[i] = clusters[i].Name
	}
	return names
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

// plainWebster reports whether req takes the Webster division on the preferences' (or the
// capacities') weights, without a spread: divide's first case, which candidates prepares.
func plainWebster(req *Request) bool {
	return req.Algorithm == federation.AlgorithmWebster && req.Spread == nil &&
		(req.Strategy == federation.StrategyWeighted || req.Strategy == federation.StrategyCapacityWeighted)
}

// websterOf is the Webster division of total among cs, which candidates filled and
// prepared (see pool); it returns the replicas left unplaced, and whether it used the
// preparation: then only the counts changed since candidates.
func (d *divider) websterOf(cs []cand, total int64, rebalance bool, got *pool) (int64, bool) {
	if got.ready && got.need <= total && got.kept <= total-got.need {
		// Every minimum and every running replica fits: steps 2 and 3 are as candidates
		// left them, and so are step 4's ranges.
		return d.give(cs, total-got.need-got.kept, got.next), true
	}
	if got.prepared {
		for i := range cs {
			cs[i].s, cs[i].kept = cs[i].m, 0 // back to every minimum in full
		}
	}
	left := total - got.need // step 2 as candidates left it: every minimum in full
	if got.need > total {
		left = d.mins(cs, total) // not enough for all: the order decides
	}
	return d.websterFrom(cs, left, rebalance), false
}

// webster is the Webster division of total among cs (steps 2 to 4 of doc.go's definition);
// it returns the replicas left unplaced.
func (d *divider) webster(cs []cand, total int64, rebalance bool) int64 {
	return d.websterFrom(cs, d.mins(cs, total), rebalance)
}

// websterFrom is webster once step 2 gave the minimums, with left replicas left.
func (d *divider) websterFrom(cs []cand, left int64, rebalance bool) int64 {
	if !rebalance {
		left, sp, all := d.keep(cs, left)
		if all {
			return d.give(cs, left, sp) // keep set step 4's ranges
		}
		return d.add(cs, left)
	}
	return d.add(cs, left)
}

// pool is what candidates found while it filled the records.
type pool struct {
	k       int    // candidates: the clusters with a preference
	need    int64  // the sum of their minimums in full
	bounded bool   // some candidate has a bound (maxReplicas or capacity)
	wor     uint64 // their weights OR-ed: 0 when every weight is 0
	mor     uint64 // their minimums OR-ed
	wsum    uint64 // the sum of their weights (KubeFed refuses more than math.MaxInt64)
	carry   uint64 // 1 when wsum went past 2^64 (possible with Webster's huge weights)

	// For the plain Webster division, candidates also does step 3 (prepared), as if every
	// minimum and every running replica fits, and sets step 4's ranges, counted in next:
	// kept is the sum of the replicas kept beyond the minimums. ready says that the weights
	// are the ones it used (not all 0); websterOf checks that everything fits, and undoes
	// the preparation when not.
	prepared, ready bool
	kept            int64
	kor             uint64 // the replicas kept beyond the minimums, OR-ed
	next            span
}

// candidates fills all, one record per request cluster, and returns how many have a
// preference: their records come first, in request order, with their bounds and effective
// weights; the others follow in any order, marked NoPreference (Divide puts them back). It
// checks each cluster and each preference as it reads them.
//
// It also gives each candidate its minimum in full, min(lo, hi), as step 2 does when the
// total covers them all, and returns need, their sum: the Webster division then skips
// step 2's pass in that common case. Every other division sets m and s itself. With no
// bound anywhere, the Webster division skips the passes that look for clusters held at one.
func candidates(req *Request, all []cand) (pool, error) {
	lk := newPrefLookup(req.Preferences)
	if lk.hasWild && !goodPreference(&lk.wild) {
		return pool{}, invalid(req)
	}
	// The loop keeps its sums in locals, and writes each record field by field: this is
	// the one pass that every division makes over the clusters and their preferences.
	prepared, keep := plainWebster(req), !req.Rebalance
	capacityWeighted := req.Strategy == federation.StrategyCapacityWeighted
	kubefed := req.Algorithm == federation.AlgorithmKubeFed
	var got pool
	var own federation.ClusterPreferences // the cluster's own entry, when it has one
	k, none := 0, len(all)                // candidates go to the front, the others to the back
	for i := range req.Clusters {
		c := &req.Clusters[i]
		p, src := lk.lookup(c.Name, &own)
		switch {
		case (src == OwnPreference && !goodPreference(p)) || !clusterLooksValid(c):
			return pool{}, invalid(req)
		case src == NoPreference:
			none--
			all[none] = cand{idx: int32(i)} // pref NoPreference, the zero value
			continue
		}
		r := &all[k]
		k++
		lo, most, hi, hiBy := boundsOf(c, p)
		w := weightOf(capacityWeighted, c, p)
		m := min(lo, hi)
		s, base, lim := m, int64(0), int64(0)
		if prepared { // step 3 as if everything fits, and step 4's range
			if keep && c.Current != nil {
				s = keptCount(m, *c.Current, hi)
			}
			base, lim = stepRange(s, w, hi)
			got.kept = satAdd(got.kept, s-m)
			got.kor |= uint64(s - m)
			got.next.room = satAdd(got.next.room, lim-base) // empty for a zero weight
		}
		// Field by field: a composite literal would be built aside and then copied.
		r.w, r.s, r.base, r.lim, r.lo, r.hi, r.m, r.kept = w, s, base, lim, lo, hi, m, s-m
		r.max, r.limit, r.idx = most, 0, int32(i)
		r.hiBy, r.by, r.pref, r.bound = hiBy, Unbounded, src, false
		if got.add(w, m, hiBy); kubefed && got.wsum > math.MaxInt64 {
			return pool{}, weightsOverflow(req)
		}
	}
	got.k, got.prepared = k, prepared
	return got, got.finish(req, &lk, all[:k])
}

// finish checks the preferences of clusters not in the request, and settles what depends
// on every candidate: whether the prepared division stands (some weight is positive), the
// estimate's sums when every range is [0, unbounded), and the all-zero weights rule.
func (g *pool) finish(req *Request, lk *prefLookup, cs []cand) error {
	// Entries for clusters not in the request were not looked up: check them too (a bad
	// preference is an error wherever it is). A duplicate name counts twice here; that is
	// only a wasted scan, and the duplicate is reported later.
	if lk.unchecked() {
		for _, p := range req.Preferences {
			if !goodPreference(&p) {
				return invalid(req)
			}
		}
	}
	positive := g.wor != 0
	g.ready = g.prepared && positive
	if g.ready && req.Rebalance && g.need == 0 && !g.bounded && g.carry == 0 {
		// Every positive weight's range is [0, unbounded): the estimate's sums are the
		// weights' (estimate sums for itself otherwise).
		g.next.wsum, g.next.plain, g.next.summed = float64(g.wsum), true, true
	}
	if !positive && req.Algorithm == federation.AlgorithmWebster {
		// Every weight 0 (or no capacity known): all count as 1.
		for i := range cs {
			cs[i].w = 1
		}
	}
	return nil
}

// add counts a candidate of weight w, minimum m and bound hiBy.
func (g *pool) add(w uint64, m int64, hiBy Bound) {
	var carry uint64
	g.wsum, carry = bits.Add64(g.wsum, w, 0)
	g.carry |= carry
	g.wor |= w
	g.mor |= uint64(m)
	g.need = satAdd(g.need, m)
	g.bounded = g.bounded || hiBy != Unbounded
}

// weightsOverflow is KubeFed's error for weights whose sum overflows int64, unless a
// cluster is invalid: that error comes first, as when the clusters were checked before.
func weightsOverflow(req *Request) error {
	if !clustersLookValid(req.Clusters) {
		return invalid(req)
	}
	return fmt.Errorf("%w: spec.clusters: Invalid value: the weights' sum overflows int64", ErrInvalidRequest)
}

// boundsOf returns a candidate's minReplicas (lo), maxReplicas (most, math.MaxInt64 when
// unbounded), and hi, the smaller of maxReplicas and capacity, with what set it.
func boundsOf(c *ClusterState, p *federation.ClusterPreferences) (lo, most, hi int64, hiBy Bound) {
	most, hi = math.MaxInt64, math.MaxInt64
	if p.MinReplicas != nil {
		lo = *p.MinReplicas
	}
	if p.MaxReplicas != nil {
		most = *p.MaxReplicas
		hi, hiBy = most, MaxReplicas
	}
	if c.Capacity != nil && *c.Capacity < hi {
		hi, hiBy = *c.Capacity, Capacity
	}
	return lo, most, hi, hiBy
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

// lookup returns cluster name's preference and where it comes from (NoPreference: none):
// its own entry, read into *own, or the "*" entry. With onlyWild, the "*" entry is every
// cluster's, without a lookup.
func (l *prefLookup) lookup(name string, own *federation.ClusterPreferences) (*federation.ClusterPreferences, Source) {
	if !l.onlyWild {
		var ok bool
		if *own, ok = l.prefs[name]; ok {
			l.own++
			return own, OwnPreference
		}
	}
	return &l.wild, l.wildSrc
}

// unchecked reports whether some entry was not looked up: a cluster not in the request.
func (l *prefLookup) unchecked() bool {
	n := len(l.prefs)
	if l.hasWild && n > 0 {
		return l.own != n-1
	}
	return !l.hasWild && l.own != n
}

// weightOf is a candidate's effective weight: its capacity under CapacityWeighted (0 when
// unknown), else its preference's weight.
func weightOf(capacityWeighted bool, c *ClusterState, p *federation.ClusterPreferences) uint64 {
	if !capacityWeighted {
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
