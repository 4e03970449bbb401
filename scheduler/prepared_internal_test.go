package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
)

// preparedRequest builds a random plain Webster request (no spread, Weighted or
// CapacityWeighted) of up to 2,000 clusters: weights 0, small, large and near 2^62; minimums,
// maximums and capacities on some clusters; running replicas on most when rebalance is off,
// and a total near what runs, so that every running replica fits about as often as not.
func preparedRequest(r *rand.Rand) Request {
	n := int(math.Exp2(r.Float64() * 11)) // 1 to 2,048 clusters, most of them few
	req := Request{
		Key:         []string{"", "ns/web", "default/app"}[r.IntN(3)],
		Rebalance:   r.IntN(3) == 0,
		Algorithm:   federation.AlgorithmWebster,
		Strategy:    []federation.Strategy{federation.StrategyWeighted, federation.StrategyCapacityWeighted}[r.IntN(4)/3],
		Preferences: map[string]federation.ClusterPreferences{},
	}
	share := 1 + r.Int64N(200)
	weight := func() int64 {
		switch r.IntN(20) {
		case 0, 1:
			return 0
		case 2:
			return 1<<62 + r.Int64N(1<<40)
		case 3:
			return r.Int64N(1 << 40)
		}
		return 1 + r.Int64N(100)
	}
	if r.IntN(4) == 0 {
		req.Preferences["*"] = federation.ClusterPreferences{Weight: weight()}
	}
	var running int64
	for i := range n {
		c := ClusterState{Name: fmt.Sprintf("member-%05d", i)}
		if r.IntN(5) == 0 {
			c.Capacity = ptr(r.Int64N(2 * share))
		}
		if !req.Rebalance && r.IntN(8) > 0 {
			c.Current = ptr(r.Int64N(2 * share))
			running += *c.Current
		}
		req.Clusters = append(req.Clusters, c)
		if r.IntN(10) == 0 {
			continue // the "*" entry, or no preference
		}
		p := federation.ClusterPreferences{Weight: weight()}
		if r.IntN(4) == 0 {
			p.MinReplicas = ptr(r.Int64N(4))
		}
		if r.IntN(5) == 0 {
			p.MaxReplicas = ptr(r.Int64N(3 * share))
			if p.MinReplicas != nil {
				*p.MaxReplicas += *p.MinReplicas
			}
		}
		req.Preferences[c.Name] = p
	}
	if r.IntN(10) == 0 {
		for name, p := range req.Preferences {
			p.Weight = 0 // every weight 0: they all count as 1
			req.Preferences[name] = p
		}
	}
	switch r.IntN(4) {
	case 0:
		req.TotalReplicas = r.Int64N(int64(n) + 1) // minimums may not all fit
	case 1:
		req.TotalReplicas = r.Int64N(int64(n)*share + 1)
	default:
		req.TotalReplicas = max(0, running+r.Int64N(41)-20) // what runs, give or take
	}
	return req
}

// straightWebster is the Webster division as divide did it before candidates prepared it:
// records filled without the preparation (a spread turns it off; fill and weightOf do not
// look at it), then step 2, keep and add one after the other.
func straightWebster(req Request) ([]cand, int64, error) {
	req.Spread = &Spread{}
	all := make([]cand, len(req.Clusters))
	got, err := candidates(&req, all)
	if err != nil || got.prepared {
		return nil, 0, fmt.Errorf("candidates: prepared %v, %w", got.prepared, err)
	}
	cs := all[:got.k]
	d := divider{clusters: req.Clusters, desc: req.Key != "" && fnv1a(req.Key)%2 == 1}
	left := req.TotalReplicas - got.need
	if got.need > req.TotalReplicas {
		left = d.mins(cs, req.TotalReplicas)
	}
	if !req.Rebalance {
		left, _, _ = d.keep(cs, left)
	}
	unplaced := d.add(cs, left)
	if got.bounded {
		d.bounds(cs, unplaced)
	}
	return cs, unplaced, nil
}

// allocationsOf is what a plan reports for the straight records cs: every cluster of req
// in request order, as the plan's reasons read them back.
func allocationsOf(req Request, cs []cand) []Allocation {
	all := make([]cand, len(req.Clusters))
	for i := range all {
		all[i] = cand{idx: int32(i)} // no preference
	}
	for _, c := range cs {
		all[c.idx] = c
	}
	var used colBits
	settle(req.Clusters, all, &used, nil)
	p := Plan{why: newReasons(all, &used, make([]int64, len(all))), names: namesOf(req.Clusters)}
	return p.Clusters()
}

// TestPreparedWebsterEqualsStraight compares the plain Webster division as Divide does it
// (candidates keeps the running replicas and sets step 4's ranges while it fills the
// records; websterOf uses them when everything fits and undoes them when not) with the same
// division done step after step, record for record: counts, minimums, kept replicas and
// bounds, and the replicas left unplaced. TestWebsterEqualsSeatBySeat compares Divide with
// the seat-by-seat definition; this one reaches thousands of clusters and counts each of
// websterOf's branches.
func TestPreparedWebsterEqualsStraight(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	branches := map[string]int{}
	// What the plan keeps of a record, by request index.
	type out struct {
		S, M, Kept int64
		Bound      bool
	}
	view := func(cs []cand, n int) []out {
		v := make([]out, n)
		for _, c := range cs {
			v[c.idx] = out{S: c.s, M: c.m, Kept: c.kept, Bound: c.bound}
		}
		return v
	}
	for i := range 2000 {
		req := preparedRequest(r)
		all := make([]cand, len(req.Clusters))
		got, err := candidates(&req, all)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !got.prepared {
			t.Fatalf("case %d: a plain Webster request was not prepared", i)
		}
		switch {
		case !got.ready:
			branches["every weight 0"]++
		case got.need > req.TotalReplicas:
			branches["minimums do not fit"]++
		case got.kept > req.TotalReplicas-got.need:
			branches["running replicas do not fit"]++
		default:
			branches["everything fits"]++
		}
		cs := all[:got.k]
		d := divider{clusters: req.Clusters, desc: req.Key != "" && fnv1a(req.Key)%2 == 1}
		unplaced, _ := d.websterOf(cs, req.TotalReplicas, req.Rebalance, &got)
		if got.bounded {
			d.bounds(cs, unplaced)
		}

		want, wantUnplaced, err := straightWebster(req)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if w, g := view(want, len(req.Clusters)), view(cs, len(req.Clusters)); !slices.Equal(w, g) || unplaced != wantUnplaced {
			t.Fatalf("case %d (C=%d, R=%d, rebalance %v): prepared division differs (-straight +prepared):\n%s\nunplaced %d, want %d",
				i, len(req.Clusters), req.TotalReplicas, req.Rebalance, cmp.Diff(w, g), unplaced, wantUnplaced)
		}
		// And the plan Divide makes of it explains each count as the straight records do
		// (its columns take their widths from what candidates counted when only the counts
		// changed after it).
		plan, err := Divide(req)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if w, g := allocationsOf(req, want), plan.Clusters(); !slices.Equal(w, g) || plan.Unplaced != wantUnplaced {
			t.Fatalf("case %d (C=%d, R=%d, rebalance %v): plan differs (-straight +Divide):\n%s", i, len(req.Clusters), req.TotalReplicas, req.Rebalance, cmp.Diff(w, g))
		}
	}
	t.Logf("branches: %v", branches)
	for _, b := range []string{"every weight 0", "minimums do not fit", "running replicas do not fit", "everything fits"} {
		if branches[b] < 40 {
			t.Errorf("branch %q ran %d times: the generator no longer reaches it (%v)", b, branches[b], branches)
		}
	}
}
