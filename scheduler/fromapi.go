package scheduler

import (
	"github.com/fedkit/fedkit/federation"
)

// RequestFor builds a request from a ReplicaSchedulingPreference: its total
// ([federation.FleetTotal]: with spec.autoscale, the autoscaler's), rebalance flag,
// cluster preferences, algorithm and strategy, for the given clusters (in placement order). It
// is pure. The RSP is used as given: defaulting (minReplicas 1) is the caller's choice, see
// [Request.Preferences]; an unknown algorithm or strategy is reported by [Divide], with its
// field path. The caller adds what the preference does not say: the clusters' Current,
// Capacity, Cost and Domain, Request.Spread (from the placement decision) and Request.Refill.
func RequestFor(key federation.Key, rsp *federation.ReplicaSchedulingPreference, clusters []ClusterState) Request {
	return Request{
		Key:           key.String(),
		TotalReplicas: federation.FleetTotal(rsp),
		Clusters:      clusters,
		Preferences:   rsp.Spec.Clusters,
		Rebalance:     rsp.Spec.Rebalance,
		Algorithm:     rsp.Spec.Algorithm,
		Strategy:      rsp.Spec.Strategy,
	}
}

// clusterState returns what Divide needs from a Cluster and its placement: its name, its cost
// per replica (spec.cost in milli-units, so "0.5" and "500m" are both 500, saturated at
// math.MaxInt64) and its failure domain as placement computed it. A negative cost (which
// ValidateCluster rejects) counts as unknown: a Cluster's bad number is never reported as the
// preference's. Current and Capacity depend on the workload and are left to the caller.
func clusterState(c *federation.Cluster, domain string) ClusterState {
	s := ClusterState{Name: c.Name, Domain: domain}
	if q := c.Spec.Cost; q != nil && q.Sign() >= 0 {
		m := milliValue(*q)
		s.Cost = &m
	}
	return s
}
