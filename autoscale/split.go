package autoscale

import (
	"fmt"
	"strings"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// SplitInput is what [SplitBounds] looks at.
type SplitInput struct {
	// Key is the preference's "namespace/name" (it seeds the division's tie-breaks).
	Key string
	// Min and Max are the fleet's bounds (spec.autoscale).
	Min, Max int32
	// Clusters are the clusters the workload is scheduled in, in the schedule's order.
	Clusters []string
	// Preferences are the preference's spec.clusters, defaulted; Algorithm its algorithm.
	Preferences map[string]federation.ClusterPreferences
	Algorithm   federation.Algorithm
}

// Bounds are one member HorizontalPodAutoscaler's minReplicas and maxReplicas. Max 0 means
// the cluster gets no share of the fleet's maxReplicas: no HorizontalPodAutoscaler there.
type Bounds struct {
	Cluster  string
	Min, Max int32
}

// Split is each cluster's bounds, in the input's order, and what made them differ from the
// fleet's (Notes).
type Split struct {
	Clusters []Bounds
	Notes    []string
}

// SplitBounds divides the fleet's minReplicas and maxReplicas among the clusters that run
// the workload, for Distributed mode, with the scheduler's own division
// ([scheduler.Divide]): each bound is a total divided by the preference's weights within
// its per-cluster minReplicas and maxReplicas. So the members' maxima add up to the fleet's
// maximum, and their minima to its minimum, wherever the preference allows. It is a pure
// function.
//
// A member HPA needs minReplicas of at least 1 and maxReplicas of at least its minimum: a
// cluster given less gets 1 (and its maximum at least its minimum), and Notes say by how
// much the members' sums then exceed the fleet's bounds. A cluster given no share of the
// maximum gets none (Max 0): no HPA runs there. An error is the division's (an invalid
// preference).
func SplitBounds(in SplitInput) (Split, error) {
	states := make([]scheduler.ClusterState, len(in.Clusters))
	for i, c := range in.Clusters {
		states[i] = scheduler.ClusterState{Name: c}
	}
	divide := func(total int32) (scheduler.Plan, error) {
		return scheduler.Divide(scheduler.Request{
			Key: in.Key, TotalReplicas: int64(total), Clusters: states, Preferences: in.Preferences,
			Rebalance: true, Algorithm: in.Algorithm,
		})
	}
	hi, err := divide(in.Max)
	if err != nil {
		return Split{}, fmt.Errorf("autoscale: divide maxReplicas %d: %w", in.Max, err)
	}
	lo, err := divide(in.Min)
	if err != nil {
		return Split{}, fmt.Errorf("autoscale: divide minReplicas %d: %w", in.Min, err)
	}
	var out Split
	var sumMin, sumMax int64
	var none []string
	for _, c := range in.Clusters {
		b := Bounds{Cluster: c, Min: int32(lo.Replicas[c]), Max: int32(hi.Replicas[c])}
		if b.Max == 0 {
			none = append(none, c)
			out.Clusters = append(out.Clusters, Bounds{Cluster: c})
			continue
		}
		b.Min = max(b.Min, 1)
		b.Max = max(b.Max, b.Min)
		sumMin, sumMax = sumMin+int64(b.Min), sumMax+int64(b.Max)
		out.Clusters = append(out.Clusters, b)
	}
	if len(none) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("no share of maxReplicas, no HorizontalPodAutoscaler: %s", strings.Join(none, ", ")))
	}
	if hi.Unplaced > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d of maxReplicas %d fit no cluster's maxReplicas", hi.Unplaced, in.Max))
	}
	if sumMin > int64(in.Min) {
		out.Notes = append(out.Notes, fmt.Sprintf("the members' minReplicas add up to %d, above the fleet's %d: a HorizontalPodAutoscaler runs at least 1", sumMin, in.Min))
	}
	if sumMax > int64(in.Max) {
		out.Notes = append(out.Notes, fmt.Sprintf("the members' maxReplicas add up to %d, above the fleet's %d: a HorizontalPodAutoscaler allows at least its minimum", sumMax, in.Max))
	}
	return out, nil
}
