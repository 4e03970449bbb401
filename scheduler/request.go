package scheduler

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
)

// Request is everything [Divide] looks at. It is plain data: build it from a
// ReplicaSchedulingPreference, the clusters placement selected and the member objects'
// current replicas, or write it by hand in a test.
type Request struct {
	// Key is the federated object's "namespace/name". It seeds the tie-breaks, so two
	// objects with the same preferences do not all pile their odd replica on the same cluster.
	Key string

	// TotalReplicas is divided among Clusters. It must not be negative.
	TotalReplicas int64

	// Clusters are the candidate clusters, in placement order. Names must be unique and not
	// empty. The plan lists every one of them, with 0 when it gets nothing.
	Clusters []ClusterState

	// Preferences map a cluster name, or "*" for every cluster without its own entry, to its
	// bounds and weight (a ReplicaSchedulingPreference's spec.clusters). A cluster with
	// neither gets 0 replicas. Nil or empty means {"*": {weight: 1}}: an even split.
	//
	// A nil MinReplicas counts as 0, as in KubeFed. [federation.DefaultReplicaSchedulingPreference]
	// sets it to 1 before the scheduler loop calls Divide, so an RSP read through the API gets
	// the specification's default of 1; an embedder that migrates from KubeFed and wants its
	// old plans replica for replica leaves the preference undefaulted.
	Preferences map[string]federation.ClusterPreferences

	// Rebalance lets the plan move running replicas to reach the weighted division. When
	// false, replicas already running (ClusterState.Current) stay where they are as far as
	// bounds and the total allow, and only the difference is divided.
	Rebalance bool

	// Algorithm divides the replicas; the zero value is [Webster].
	Algorithm Algorithm

	// Strategy chooses what the weights are; the zero value is [Weighted].
	Strategy Strategy

	// Spread, when not nil, divides replicas over failure domains (ClusterState.Domain)
	// first and then among each domain's clusters. It needs the Webster algorithm.
	Spread *Spread
}

// ClusterState is what the scheduler knows about one candidate cluster.
type ClusterState struct {
	// Name is the Cluster's name.
	Name string

	// Current is the number of replicas the member object has now (its spec.replicas), or nil
	// when the object does not exist there or has not been observed.
	Current *int64

	// Capacity is how many replicas the cluster can take, or nil when unknown (unbounded).
	// The scheduler loop estimates it from the cluster's available resources and the
	// template's requests, or from pods that stay unschedulable.
	Capacity *int64

	// Cost is the cost of one replica in this cluster, in any unit consistent across
	// clusters (the loop passes federation.ClusterSpec.Cost in milli-units), or nil when
	// unknown. Only [CostOptimized] reads it; unknown costs come after every known one.
	Cost *int64

	// Domain is the cluster's failure domain (a region, a zone, a provider...) for Spread;
	// [placement.Domain] computes it from a Cluster and a topology key.
	Domain string
}

// Spread divides replicas over failure domains: the replicas are first divided among the
// domains (each weighted by the sum of its clusters' weights, and bounded by the sum of their
// bounds), then within each domain among its clusters. It is the replica half of a
// placement spread constraint (federation.SpreadConstraint), whose cluster half is done by
// [placement.Evaluate].
type Spread struct {
	// MinDomains is how many domains get at least one replica, when there are that many
	// domains and replicas (domains are served in weight order). 0 means no minimum.
	MinDomains int32

	// MaxSkew bounds how far one domain may exceed an even share: no domain gets more than
	// TotalReplicas/domains (rounded down) + MaxSkew, unless its clusters' minReplicas add up
	// to more (minimums win). 0 means unbounded. Replicas that the bound leaves nowhere to go
	// are reported as unplaced, never forced into a domain.
	MaxSkew int64
}

// Algorithm is how replicas are divided by weight.
type Algorithm int

const (
	// Webster divides by bounded Sainte-Laguë (Webster's method): minimums first, then each
	// replica to the cluster with the largest weight/(2·replicas+1). It is unbiased,
	// house-monotone (one more replica in total moves exactly one replica) and respects
	// weights when scaling down. It is the default.
	Webster Algorithm = iota

	// KubeFed reproduces KubeFed's replica planner bit for bit, so a KubeFed user can migrate
	// without one replica moving.
	KubeFed
)

// String returns the name used in ReplicaSchedulingPreference.spec.algorithm.
func (a Algorithm) String() string {
	switch a {
	case Webster:
		return federation.AlgorithmWebster
	case KubeFed:
		return federation.AlgorithmKubeFed
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm maps a ReplicaSchedulingPreference's spec.algorithm ("" means Webster) to an
// Algorithm. An unknown name returns an error wrapping [ErrInvalidRequest].
func ParseAlgorithm(s string) (Algorithm, error) {
	switch s {
	case "", federation.AlgorithmWebster:
		return Webster, nil
	case federation.AlgorithmKubeFed:
		return KubeFed, nil
	}
	return 0, fmt.Errorf("%w: spec.algorithm: Unsupported value: %q: supported values: %q, %q",
		ErrInvalidRequest, s, federation.AlgorithmWebster, federation.AlgorithmKubeFed)
}

// Strategy is what the division optimises for.
type Strategy int

const (
	// Weighted divides by the preferences' weights. It is the default.
	Weighted Strategy = iota

	// CapacityWeighted takes each cluster's weight from its Capacity (the replicas it can
	// still take), like Karmada's dynamic weights; a cluster with unknown capacity weighs 0.
	// Preferences still give the bounds.
	CapacityWeighted

	// CostOptimized fills the cheapest clusters first (ClusterState.Cost), up to their
	// maximum and capacity, and spills to the next cheapest. Clusters of equal cost share by
	// weight. Minimums still come first.
	CostOptimized

	// Duplicated gives every candidate the full TotalReplicas (capped by its maximum and
	// capacity): for kinds whose replicas are not divided, or objects without a preference.
	Duplicated
)

// String returns the name used in ReplicaSchedulingPreference.spec.strategy.
func (s Strategy) String() string {
	switch s {
	case Weighted:
		return federation.StrategyWeighted
	case CapacityWeighted:
		return federation.StrategyCapacityWeighted
	case CostOptimized:
		return federation.StrategyCostOptimized
	case Duplicated:
		return federation.StrategyDuplicated
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// ParseStrategy maps a ReplicaSchedulingPreference's spec.strategy ("" means Weighted) to a
// Strategy. An unknown name returns an error wrapping [ErrInvalidRequest].
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "", federation.StrategyWeighted:
		return Weighted, nil
	case federation.StrategyCapacityWeighted:
		return CapacityWeighted, nil
	case federation.StrategyCostOptimized:
		return CostOptimized, nil
	case federation.StrategyDuplicated:
		return Duplicated, nil
	}
	return 0, fmt.Errorf("%w: spec.strategy: Unsupported value: %q", ErrInvalidRequest, s)
}
