package scheduler

import (
	"fmt"
	"strings"

	"github.com/fedkit/fedkit/federation"
)

// Plan is the result of [Divide]: plain data, read-only by convention, that the scheduler
// loop writes into status.schedule and the Scheduled condition.
type Plan struct {
	// Replicas has an entry for every cluster of the request, 0 included.
	Replicas map[string]int64

	// Overflow lists, per cluster, replicas its share would have given it beyond its
	// capacity. Nil when there are none. With KubeFed it is KubeFed's overflow map. With
	// Webster it is how the unplaced replicas would divide among the clusters that capacity
	// (not maxReplicas) held back, so an autoscaler knows where more room would help; it is
	// empty when every replica was placed. With Duplicated it is each capped cluster's
	// shortfall.
	Overflow map[string]int64

	// Unplaced counts the replicas that fit nowhere: every candidate is at its maximum or
	// capacity, or no cluster has a preference. They are never silently dropped: the sum of
	// Replicas plus Unplaced is always TotalReplicas. With Duplicated, where each cluster gets
	// its own copy of the total, it is the sum of what capacity cut from those copies (a
	// cluster's maxReplicas is a preference, not a shortfall, and is not counted), so a
	// cluster without room for the whole total is never cut silently.
	Unplaced int64

	// Total is the request's TotalReplicas.
	Total int64

	// Algorithm and Strategy are the ones used (never "").
	Algorithm federation.Algorithm
	Strategy  federation.Strategy

	// Each cluster's count and its reasons, in the request's cluster order, compact (see
	// reasons): [Plan.Clusters] turns them into Allocations on demand. Then the names, and
	// the domains (nil without a Spread).
	why     reasons
	names   []string
	domains []string
}

// Clusters explains each cluster's count: an Allocation per cluster of the request, in the
// request's cluster order. It builds a new slice on every call; Divide keeps the plan
// compact, so a caller that only needs Replicas does not pay for the explanations.
func (p Plan) Clusters() []Allocation {
	if p.why.len() == 0 {
		return nil
	}
	out := make([]Allocation, p.why.len())
	for i := range out {
		out[i] = p.allocation(i)
	}
	return out
}

// Cluster returns the Allocation of the named cluster, and false when the request did not
// have it.
func (p Plan) Cluster(name string) (Allocation, bool) {
	for i := range p.names {
		if p.names[i] == name {
			return p.allocation(i), true
		}
	}
	return Allocation{}, false
}

// allocation builds the i-th cluster's Allocation from its record.
func (p Plan) allocation(i int) Allocation {
	c := p.why.rec(i)
	a := Allocation{
		Name:       p.names[i],
		Replicas:   c.s,
		Min:        c.m,
		Kept:       c.kept,
		Weighted:   c.s - c.m - c.kept,
		Weight:     int64(c.w),
		Preference: c.pref,
		Bound:      c.by,
		Limit:      c.limit,
	}
	if p.domains != nil {
		a.Domain = p.domains[i]
	}
	return a
}

// Allocation is one cluster's share and why it is what it is. Replicas = Min + Kept +
// Weighted.
type Allocation struct {
	// Name is the cluster's name.
	Name string

	// Replicas is the cluster's share.
	Replicas int64

	// Min counts the replicas given first, for the cluster's minReplicas.
	Min int64

	// Kept counts the running replicas kept beyond Min because Rebalance is off.
	Kept int64

	// Weighted counts the replicas given by weight (by cost order for CostOptimized, the
	// whole count for Duplicated).
	Weighted int64

	// Weight is the weight the division used (after the all-zero rule, or the capacity for
	// CapacityWeighted).
	Weight int64

	// Preference says where the cluster's preference came from.
	Preference Source

	// Bound is the limit that stopped the cluster from getting more than its share, or
	// Unbounded when none did.
	Bound Bound

	// Limit is Bound's value (maxReplicas, capacity, or the domain's cap).
	Limit int64

	// Domain is the cluster's failure domain when the request has a Spread.
	Domain string
}

// Source says where a cluster's preference came from.
type Source uint8

const (
	// NoPreference: neither the cluster nor "*" has an entry, so the cluster gets 0.
	NoPreference Source = iota
	// OwnPreference: the cluster has its own entry.
	OwnPreference
	// WildcardPreference: the "*" entry applies.
	WildcardPreference
)

// String returns a short description.
func (s Source) String() string {
	switch s {
	case NoPreference:
		return "no preference"
	case OwnPreference:
		return "own preference"
	case WildcardPreference:
		return `preference "*"`
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// Bound is the limit that kept a cluster below its share.
type Bound uint8

const (
	// Unbounded: nothing held the cluster back.
	Unbounded Bound = iota
	// MaxReplicas: the preference's maxReplicas.
	MaxReplicas
	// Capacity: the cluster's capacity.
	Capacity
	// DomainSkew: the cluster's failure domain reached its share plus Spread.MaxSkew.
	DomainSkew
)

// String returns the name used in explanations.
func (b Bound) String() string {
	switch b {
	case Unbounded:
		return "unbounded"
	case MaxReplicas:
		return "maxReplicas"
	case Capacity:
		return "capacity"
	case DomainSkew:
		return "domain skew"
	}
	return fmt.Sprintf("Bound(%d)", int(b))
}

// Explain says in one line why the cluster got its count, e.g.
// "eu: 4 = min 1 + kept 2 + weight 1 (weight 2), capped by maxReplicas 4".
func (a Allocation) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d", a.Name, a.Replicas)
	if a.Preference == NoPreference {
		fmt.Fprintf(&b, ", no preference (neither %q nor %q)", a.Name, federation.WildcardCluster)
		return b.String()
	}
	var parts []string
	if a.Min > 0 {
		parts = append(parts, fmt.Sprintf("min %d", a.Min))
	}
	if a.Kept > 0 {
		parts = append(parts, fmt.Sprintf("kept %d", a.Kept))
	}
	if a.Weighted > 0 {
		parts = append(parts, fmt.Sprintf("weight %d", a.Weighted))
	}
	if len(parts) > 0 && (len(parts) > 1 || a.Weighted == 0) {
		b.WriteString(" = " + strings.Join(parts, " + "))
	}
	fmt.Fprintf(&b, " (weight %d", a.Weight)
	if a.Preference == WildcardPreference {
		b.WriteString(` from "*"`)
	}
	if a.Domain != "" {
		fmt.Fprintf(&b, ", domain %s", a.Domain)
	}
	b.WriteString(")")
	if a.Bound != Unbounded {
		fmt.Fprintf(&b, ", capped by %s %d", a.Bound, a.Limit)
	}
	return b.String()
}

// Explain returns the explanation of one cluster's count, or "" when the cluster was not in
// the request.
func (p Plan) Explain(cluster string) string {
	if a, ok := p.Cluster(cluster); ok {
		return a.Explain()
	}
	return ""
}

// summaryCapped is how many capped clusters the summary names before "and N more".
const summaryCapped = 3

// Summary is one line for a condition message, e.g. "9/10 replicas on 3 of 4 clusters
// (Webster, Weighted); capped: eu by maxReplicas 4; 1 unplaced". Per-cluster detail is in
// Explain.
func (p Plan) Summary() string {
	var placed int64
	used, capped, noPref := 0, 0, 0
	for i := range p.why.len() {
		c := p.why.rec(i)
		placed += c.s
		if c.s > 0 {
			used++
		}
		if c.by != Unbounded {
			capped++
		}
		if c.pref == NoPreference {
			noPref++
		}
	}
	var b strings.Builder
	if p.Strategy == federation.StrategyDuplicated {
		fmt.Fprintf(&b, "%d replicas each on %d of %d clusters (%s)", p.Total, used, p.why.len(), p.Strategy)
	} else {
		fmt.Fprintf(&b, "%d/%d replicas on %d of %d clusters (%s, %s)", placed, p.Total, used, p.why.len(), p.Algorithm, p.Strategy)
	}
	if capped > 0 {
		var named []string
		for i := range p.why.len() {
			if c := p.why.rec(i); c.by != Unbounded && len(named) < summaryCapped {
				named = append(named, fmt.Sprintf("%s by %s %d", p.names[i], c.by, c.limit))
			}
		}
		b.WriteString("; capped: " + strings.Join(named, ", "))
		if capped > len(named) {
			fmt.Fprintf(&b, " and %d more", capped-len(named))
		}
	}
	if noPref > 0 {
		fmt.Fprintf(&b, "; %d without preference", noPref)
	}
	if p.Unplaced > 0 {
		fmt.Fprintf(&b, "; %d unplaced", p.Unplaced)
	}
	return b.String()
}

// Schedule returns the plan as a federated object's status.schedule: every cluster of the
// request, in request (placement) order, with its replicas.
func (p Plan) Schedule() federation.Schedule {
	s := federation.Schedule{Clusters: make([]federation.ScheduledCluster, p.why.len())}
	for i := range s.Clusters {
		s.Clusters[i] = federation.ScheduledCluster{Name: p.names[i], Replicas: p.why.s.at(i)}
	}
	return s
}
