package placement

import (
	"encoding/binary"
	"math"

	"github.com/fedkit/fedkit/federation"
)

// Choosing clusters for spread constraints.
//
// The constraints ask the selection, at most maxClusters clusters, to cover at least
// minGroups groups and at most maxGroups groups of each topology key at once. Taking the
// best-ranked cluster of each new group greedily can fail where a selection exists (regions
// us and eu, providers aws and gcp, two clusters: us/aws then eu/aws leaves gcp out, where
// us/aws and eu/gcp cover both), and the problem is a set cover in general. choose searches:
//
//   - It only ever adds a cluster that brings a new group to a constraint whose minGroups is
//     not met yet, in rank order: any selection that satisfies the constraints keeps
//     satisfying them without the clusters that bring nothing, so nothing is lost.
//   - Clusters with the same group for every constraint are interchangeable, so only the
//     best-ranked of each such class is tried: the search runs over classes (at most the
//     product of the group counts, whatever the number of clusters).
//   - A branch is cut when some constraint needs more new groups than clusters are left to
//     pick, or than the remaining classes hold.
//   - The first selection found is taken. Because it tries clusters in rank order, picking
//     before skipping, it is the greedy choice whenever the greedy choice works, and
//     otherwise the selection whose best-ranked clusters are the best ranked (compared
//     cluster by cluster in rank order).
//
// The search is bounded by searchBudget class examinations (tens of milliseconds at worst).
// Past it, Evaluate gives up: it returns the greedy best effort with ErrUnsatisfiable, whose
// message says that the bound was reached, so a selection may exist. Realistic constraints
// (a few keys, tens of groups, maxClusters in the tens) settle in a few hundred steps; a
// fleet of thousands of clusters costs one pass to group them into classes.

// searchBudget bounds choose's search, in class examinations.
const searchBudget = 1 << 20

// groups holds the group of every eligible cluster for the constraints that restrict the
// selection (a minGroups or a maxGroups), as small integers.
type groups struct {
	cons     []int     // the constraints' indices in spec.placement.spreadConstraints
	min, max []int     // their minGroups, and maxGroups (math.MaxInt when unbounded)
	id       [][]int32 // id[k][j]: eligible cluster j's group for constraint cons[k]
	count    []int     // count[k]: how many groups constraint cons[k] has among the eligible
	budget   int       // choose's search bound: searchBudget
	cut      bool      // choose's search ran out of budget
}

// newGroups numbers the groups of the restricting constraints.
func newGroups(p *federation.Placement, domains [][]string, n int) *groups {
	g := &groups{budget: searchBudget}
	for i, sc := range p.SpreadConstraints {
		if sc.MinGroups <= 0 && sc.MaxGroups <= 0 {
			continue
		}
		hi := math.MaxInt
		if sc.MaxGroups > 0 {
			hi = int(sc.MaxGroups)
		}
		ids := make([]int32, n)
		seen := make(map[string]int32)
		for j, dom := range domains[i] {
			v, ok := seen[dom]
			if !ok {
				v = int32(len(seen))
				seen[dom] = v
			}
			ids[j] = v
		}
		g.cons = append(g.cons, i)
		g.min = append(g.min, int(max(sc.MinGroups, 0)))
		g.max = append(g.max, hi)
		g.id = append(g.id, ids)
		g.count = append(g.count, len(seen))
	}
	return g
}

// selection is a set of clusters under construction: how many of them each group holds.
type selection struct {
	g       *groups
	held    [][]int32 // held[k][group]
	covered []int     // covered[k]: groups of constraint k with a cluster
}

func (g *groups) state() *selection {
	s := &selection{g: g, held: make([][]int32, len(g.cons)), covered: make([]int, len(g.cons))}
	for k := range g.cons {
		s.held[k] = make([]int32, g.count[k])
	}
	return s
}

func (s *selection) add(j int) {
	for k := range s.held {
		v := s.g.id[k][j]
		if s.held[k][v] == 0 {
			s.covered[k]++
		}
		s.held[k][v]++
	}
}

func (s *selection) remove(j int) {
	for k := range s.held {
		v := s.g.id[k][j]
		s.held[k][v]--
		if s.held[k][v] == 0 {
			s.covered[k]--
		}
	}
}

// capped returns the first constraint (as an index into g.cons) whose maxGroups cluster j
// would exceed, or -1.
func (s *selection) capped(j int) int {
	for k := range s.held {
		if s.held[k][s.g.id[k][j]] == 0 && s.covered[k] >= s.g.max[k] {
			return k
		}
	}
	return -1
}

// useful reports whether cluster j brings a new group to a constraint short of its minGroups.
func (s *selection) useful(j int) bool {
	for k := range s.held {
		if s.covered[k] < s.g.min[k] && s.held[k][s.g.id[k][j]] == 0 {
			return true
		}
	}
	return false
}

// met reports whether every minGroups is covered.
func (s *selection) met() bool {
	for k := range s.covered {
		if s.covered[k] < s.g.min[k] {
			return false
		}
	}
	return true
}

// choose returns clusters (indices in rank order) that, with at most limit clusters, meet
// every minGroups without exceeding a maxGroups, found as described at the top of this file.
// When there are none, or the search ran out of budget (cut), it returns the greedy best
// effort.
func (g *groups) choose(limit int) (picks []int, cut bool) {
	need := false
	feasible := true
	for k := range g.cons {
		if g.min[k] > 0 {
			need = true
		}
		if g.min[k] > min(g.count[k], limit, g.max[k]) {
			feasible = false // too few groups or clusters: no search can help
		}
	}
	if !need {
		return nil, false
	}
	reps := g.classes()
	if feasible {
		sr := &search{s: g.state(), reps: reps, suffix: g.suffixGroups(reps), budget: g.budget}
		if sr.dfs(0, limit) {
			return sr.picks, false
		}
		cut = sr.steps > sr.budget
	}
	s := g.state()
	for _, j := range reps { // the greedy best effort
		if len(picks) == limit || s.met() {
			break
		}
		if s.useful(j) && s.capped(j) < 0 {
			s.add(j)
			picks = append(picks, j)
		}
	}
	return picks, cut
}

// classes returns the best-ranked cluster of every class of clusters with the same groups for
// every constraint, in rank order.
func (g *groups) classes() []int {
	n := len(g.id[0])
	seen := make(map[string]struct{})
	key := make([]byte, 4*len(g.cons))
	var reps []int
	for j := range n {
		for k := range g.cons {
			binary.LittleEndian.PutUint32(key[4*k:], uint32(g.id[k][j]))
		}
		if _, ok := seen[string(key)]; ok {
			continue
		}
		seen[string(key)] = struct{}{}
		reps = append(reps, j)
	}
	return reps
}

// suffixGroups returns, per constraint, how many distinct groups reps[q:] hold, for every q.
func (g *groups) suffixGroups(reps []int) [][]int32 {
	out := make([][]int32, len(g.cons))
	for k := range g.cons {
		if g.min[k] == 0 {
			continue
		}
		seen := make([]bool, g.count[k])
		col := make([]int32, len(reps)+1)
		for q := len(reps) - 1; q >= 0; q-- {
			col[q] = col[q+1]
			if v := g.id[k][reps[q]]; !seen[v] {
				seen[v] = true
				col[q]++
			}
		}
		out[k] = col
	}
	return out
}

// search is choose's depth-first search over classes.
type search struct {
	s      *selection
	reps   []int
	suffix [][]int32
	picks  []int
	steps  int
	budget int
}

// dfs extends the selection with classes from reps[from:], at most left more, and reports
// whether it met every minGroups; the selection is then in picks.
func (sr *search) dfs(from, left int) bool {
	if sr.s.met() {
		return true
	}
	for k, col := range sr.suffix {
		if col == nil {
			continue
		}
		if short := sr.s.g.min[k] - sr.s.covered[k]; short > left || short > int(col[from]) {
			return false
		}
	}
	for q := from; q < len(sr.reps); q++ {
		if sr.steps++; sr.steps > sr.budget {
			return false
		}
		j := sr.reps[q]
		if !sr.s.useful(j) || sr.s.capped(j) >= 0 {
			continue
		}
		sr.s.add(j)
		sr.picks = append(sr.picks, j)
		if sr.dfs(q+1, left-1) {
			return true
		}
		sr.picks = sr.picks[:len(sr.picks)-1]
		sr.s.remove(j)
		if sr.steps > sr.budget {
			return false
		}
	}
	return false
}
