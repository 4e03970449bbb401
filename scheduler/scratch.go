package scheduler

import "sync"

// A division's working memory: one cand per cluster, the selection's heap, and a value per
// cluster for the plan's columns. Divide hands
// the plan a compact copy of the results (reasons) and gives the working records back, so a
// steady caller (the scheduler loop, a benchmark) reuses them instead of allocating and
// zeroing tens of kilobytes per call for a few microseconds of use.
type scratch struct {
	cands []cand
	heap  []int32
	vals  []int64 // newReasons' column values

	// names are the names of the last division's clusters, in order, as its plan keeps
	// them. Plans never change their names, so a division of the same clusters shares the
	// slice instead of copying 16 bytes a cluster again: divide compares the names as it
	// builds the plan's map (a string compare that stops at equal pointers), and makes a
	// new slice when any differs. It is not a cache of results: nothing else is kept.
	names []string
}

// scratchPool holds the scratch of finished divisions. It is a pool of memory, not a cache
// of results: candidates writes every record it hands to a division in full, divide copies
// what the plan keeps before it puts the scratch back, and no plan or caller holds a
// reference into it. sync.Pool is safe for concurrent divisions and frees what idles
// through two garbage collections.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// scratchMaxCands bounds the records a scratch keeps when it goes back to the pool, so one
// huge request does not pin its memory in every later one's.
const scratchMaxCands = 1 << 16

// getScratch returns a scratch with n records (their contents undefined: see candidates).
func getScratch(n int) *scratch {
	sc := scratchPool.Get().(*scratch)
	if cap(sc.cands) < n {
		sc.cands = make([]cand, n)
		sc.vals = make([]int64, n)
	}
	sc.cands = sc.cands[:n]
	return sc
}

// putScratch gives sc back to the pool, unless it grew too large to keep.
func putScratch(sc *scratch) {
	if cap(sc.cands) > scratchMaxCands || cap(sc.heap) > scratchMaxCands {
		return
	}
	scratchPool.Put(sc)
}
