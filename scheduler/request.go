package scheduler

import (
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
	// minimums, bounds and the total allow, and only the difference is divided.
	Rebalance bool

	// Refill, with Rebalance off, gives the clusters below their fair share replicas back:
	// each cluster's running replicas count as at least its share (its count in the same
	// division with Rebalance on), and the replicas this adds come from the kept seats that
	// come last in the order, those of the clusters above their share (step 3 of doc.go's
	// definition). A recovered or new cluster, with nothing running, is the usual beneficiary.
	// It needs the Webster algorithm; it has no effect with Rebalance on, which moves every
	// replica to its share on every division. With CostOptimized, cheaper clusters keep their
	// running replicas before dearer ones are refilled, as cost comes first in that strategy.
	//
	// Divide reads no clock: the scheduler loop sets Refill once per rebalancePeriod (see
	// [Scheduler.Reconcile]), so replicas move at most that often.
	Refill bool

	// Algorithm divides the replicas; "" means [Webster].
	Algorithm Algorithm

	// Strategy chooses what the weights are; "" means federation.StrategyWeighted.
	Strategy federation.Strategy

	// Spread, when not nil, divides replicas over failure domains (ClusterState.Domain)
	// first and then among each domain's clusters. It needs the Webster algorithm and the
	// Weighted or CapacityWeighted strategy.
	Spread *Spread
}

// ClusterState is what the scheduler knows about one candidate cluster.
type ClusterState struct {
	// Name is the Cluster's name.
	Name string

	// Current is the number of replicas the member object has now (its spec.replicas), or nil
	// when the object does not exist there or has not been observed.
	Current *int64

	// Capacity is how many of this object's replicas the cluster can hold in all, the ones
	// running there included, or nil when unknown (unbounded). It is a total, not headroom:
	// the scheduler loop computes it as what fits in the cluster's status.available (the
	// room left once running pods, this object's among them, are counted) plus the replicas
	// this object runs there already, so a cluster that its own replicas fill keeps them.
	Capacity *int64

	// Cost is the cost of one replica in this cluster, in any unit consistent across
	// clusters (the loop passes federation.ClusterSpec.Cost in milli-units), or nil when
	// unknown. Only StrategyCostOptimized reads it; unknown costs come after every known one.
	Cost *int64

	// Domain is the cluster's failure domain (a region, a zone, a provider...) for Spread:
	// the Domain of its [placement.Candidate], which placement computes for the topology key
	// of [placement.Decision].ReplicaSpread.
	Domain string
}

// Spread divides replicas over failure domains: the replicas are first divided among the
// domains (each weighted by the sum of its clusters' weights, and bounded by the sum of their
// bounds), then within each domain among its clusters. Placement owns spread constraints
// and the groups; this is only the arithmetic: the scheduler loop builds it from
// [placement.Decision].ReplicaSpread (MinDomains from its MinGroups, MaxSkew from its
// MaxSkew), and the domains from the selected candidates.
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
