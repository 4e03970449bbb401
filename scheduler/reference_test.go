package scheduler_test

import (
	"math"
	"math/big"
	"sort"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// This file holds the definitions the fast code is checked against: Webster seat by seat,
// exactly as doc.go states it (big-integer comparisons, one replica per loop), and KubeFed's
// planner transcribed in its original map-based shape.

type refCand struct {
	name       string
	w, lo, hi  int64
	cur        *int64
	cost       int64
	hasCost    bool
	m, s       int64
	maxR, capR *int64
	hash       uint32
}

func refPrefs(req scheduler.Request) map[string]federation.ClusterPreferences {
	if len(req.Preferences) == 0 {
		return map[string]federation.ClusterPreferences{"*": {Weight: 1}}
	}
	return req.Preferences
}

func refCandidates(req scheduler.Request) []*refCand {
	prefs := refPrefs(req)
	var cs []*refCand
	for _, c := range req.Clusters {
		p, ok := prefs[c.Name]
		if !ok {
			p, ok = prefs["*"]
		}
		if !ok {
			continue
		}
		rc := &refCand{name: c.Name, w: p.Weight, hi: math.MaxInt64, cur: c.Current, maxR: p.MaxReplicas, capR: c.Capacity}
		if req.Strategy == federation.StrategyCapacityWeighted {
			rc.w = 0
			if c.Capacity != nil {
				rc.w = *c.Capacity
			}
		}
		if p.MinReplicas != nil {
			rc.lo = *p.MinReplicas
		}
		if p.MaxReplicas != nil {
			rc.hi = *p.MaxReplicas
		}
		if c.Capacity != nil && *c.Capacity < rc.hi {
			rc.hi = *c.Capacity
		}
		if c.Cost != nil {
			rc.cost, rc.hasCost = *c.Cost, true
		}
		cs = append(cs, rc)
	}
	return cs
}

func fnv1a32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// cmpPriority compares a.w/(2sa+1) with b.w/(2sb+1) exactly.
func cmpPriority(aw, sa, bw, sb int64) int {
	l := new(big.Int).Mul(big.NewInt(aw), new(big.Int).Add(new(big.Int).Mul(big.NewInt(sb), big.NewInt(2)), big.NewInt(1)))
	r := new(big.Int).Mul(big.NewInt(bw), new(big.Int).Add(new(big.Int).Mul(big.NewInt(sa), big.NewInt(2)), big.NewInt(1)))
	return l.Cmp(r)
}

// referenceWebster is the seat-by-seat definition of doc.go (Weighted, CapacityWeighted and
// CostOptimized; cost tiers decide first when the strategy is CostOptimized).
func referenceWebster(req scheduler.Request) (map[string]int64, int64) {
	cs := refCandidates(req)
	allZero := true
	for _, c := range cs {
		allZero = allZero && c.w == 0
	}
	if allZero {
		for _, c := range cs {
			c.w = 1
		}
	}
	desc := req.Key != "" && fnv1a32(req.Key)%2 == 1
	first := func(a, b string) bool {
		if desc {
			return a > b
		}
		return a < b
	}
	cost := req.Strategy == federation.StrategyCostOptimized
	// cheaper reports whether a's tier comes before b's (-1), after (1), or is the same (0).
	tier := func(a, b *refCand) int {
		switch {
		case !cost:
			return 0
		case a.hasCost != b.hasCost:
			if a.hasCost {
				return -1
			}
			return 1
		case a.cost < b.cost:
			return -1
		case a.cost > b.cost:
			return 1
		}
		return 0
	}

	order := append([]*refCand(nil), cs...)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].w != order[j].w {
			return order[i].w > order[j].w
		}
		return first(order[i].name, order[j].name)
	})
	left := req.TotalReplicas
	for _, c := range order {
		c.m = min(c.lo, c.hi, left)
		c.s = c.m
		left -= c.m
	}
	sum := func() int64 {
		var n int64
		for _, c := range cs {
			n += c.s
		}
		return n
	}
	if !req.Rebalance {
		for _, c := range cs {
			if c.cur != nil {
				c.s = max(c.m, min(*c.cur, c.hi))
			}
		}
		for sum() > req.TotalReplicas {
			var victim *refCand
			for _, c := range cs {
				if c.s <= c.m {
					continue
				}
				if victim == nil {
					victim = c
					continue
				}
				// The victim is the seat that comes last: most expensive tier, then smallest
				// w/(2s-1), then more replicas, then the reverse tie order.
				if t := tier(c, victim); t != 0 {
					if t > 0 {
						victim = c
					}
					continue
				}
				switch cmpPriority(c.w, c.s-1, victim.w, victim.s-1) {
				case -1:
					victim = c
				case 0:
					if c.s > victim.s || (c.s == victim.s && first(victim.name, c.name)) {
						victim = c
					}
				}
			}
			victim.s--
		}
	}
	for sum() < req.TotalReplicas {
		var best *refCand
		for _, c := range cs {
			if c.s >= c.hi || c.w <= 0 {
				continue
			}
			if best == nil {
				best = c
				continue
			}
			if t := tier(c, best); t != 0 {
				if t < 0 {
					best = c
				}
				continue
			}
			switch cmpPriority(c.w, c.s, best.w, best.s) {
			case 1:
				best = c
			case 0:
				if c.s < best.s || (c.s == best.s && first(c.name, best.name)) {
					best = c
				}
			}
		}
		if best == nil {
			break
		}
		best.s++
	}
	out := map[string]int64{}
	for _, c := range req.Clusters {
		out[c.Name] = 0
	}
	for _, c := range cs {
		out[c.name] = c.s
	}
	return out, req.TotalReplicas - sum()
}

// referenceKubeFed is KubeFed's planner.Plan in its own shape: maps for plan, overflow and
// preallocation, a sorted preference list, rounds rebuilt each time.
func referenceKubeFed(req scheduler.Request) (plan, overflow map[string]int64) {
	prefs := refPrefs(req)
	current := map[string]int64{}
	capacity := map[string]int64{}
	var preferences []*refCand
	plan = map[string]int64{}
	overflow = map[string]int64{}
	for _, c := range req.Clusters {
		if c.Current != nil {
			current[c.Name] = *c.Current
		}
		if c.Capacity != nil {
			capacity[c.Name] = *c.Capacity
		}
		p, ok := prefs[c.Name]
		if !ok {
			p, ok = prefs["*"]
		}
		if !ok {
			plan[c.Name] = 0
			continue
		}
		rc := &refCand{name: c.Name, w: p.Weight, maxR: p.MaxReplicas}
		if p.MinReplicas != nil {
			rc.lo = *p.MinReplicas
		}
		h := uint32(2166136261) // hash/fnv.New32: FNV-1
		for _, b := range []byte(c.Name + req.Key) {
			h *= 16777619
			h ^= uint32(b)
		}
		rc.hash = h
		preferences = append(preferences, rc)
	}
	sort.Slice(preferences, func(i, j int) bool {
		a, b := preferences[i], preferences[j]
		return a.w > b.w || (a.w == b.w && (a.hash < b.hash || (a.hash == b.hash && a.name < b.name)))
	})
	remaining := req.TotalReplicas
	for _, p := range preferences {
		m := min(p.lo, remaining)
		if c, ok := capacity[p.name]; ok {
			m = min(m, c)
		}
		remaining -= m
		plan[p.name] = m
	}
	preallocated := map[string]int64{}
	if !req.Rebalance {
		for _, p := range preferences {
			planned := plan[p.name]
			count, hasSome := current[p.name]
			if hasSome && count > planned {
				target := count
				if p.maxR != nil {
					target = min(*p.maxR, target)
				}
				if c, ok := capacity[p.name]; ok {
					target = min(c, target)
				}
				extra := max(0, min(target-planned, remaining))
				remaining -= extra
				preallocated[p.name] = extra
				plan[p.name] = extra + planned
			}
		}
	}
	modified := true
	for trial := 0; modified && remaining > 0; trial++ {
		modified = false
		weightSum := int64(0)
		for _, p := range preferences {
			weightSum += p.w
		}
		var newPreferences []*refCand
		distributeInThisLoop := remaining
		for _, p := range preferences {
			if weightSum <= 0 {
				break
			}
			start := plan[p.name]
			extra := (distributeInThisLoop*p.w + weightSum - 1) / weightSum
			extra = min(extra, remaining)
			prealloc := preallocated[p.name]
			usedPrealloc := min(extra, prealloc)
			preallocated[p.name] = prealloc - usedPrealloc
			extra -= usedPrealloc
			if usedPrealloc > 0 {
				modified = true
			}
			total := start + extra
			full := false
			if p.maxR != nil && total > *p.maxR {
				total = *p.maxR
				full = true
			}
			if c, ok := capacity[p.name]; ok && total > c {
				overflow[p.name] = total - c
				total = c
				full = true
			}
			if !full {
				newPreferences = append(newPreferences, p)
			}
			remaining -= total - start
			plan[p.name] = total
			if total > start {
				modified = true
			}
		}
		preferences = newPreferences
	}
	if !req.Rebalance {
		for k, v := range overflow {
			overflow[k] = min(v, remaining)
			if overflow[k] <= 0 {
				delete(overflow, k)
			}
		}
	}
	return plan, overflow
}
