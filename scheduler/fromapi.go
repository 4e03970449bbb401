package scheduler

import (
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// These helpers turn API objects into a Request's parts, so the scheduler loop (and a test)
// builds requests the same way. They are pure.

// NewClusterState returns the state Divide needs from a Cluster: its name, its cost per
// replica (spec.cost in milli-units, so "0.5" and "500m" are both 500) and, when topologyKey
// is not empty, its failure domain for that key ([placement.Domain]). Current and Capacity
// depend on the workload and are left for the caller.
func NewClusterState(c *federation.Cluster, topologyKey string) ClusterState {
	s := ClusterState{Name: c.Name}
	if c.Spec.Cost != nil {
		v := c.Spec.Cost.MilliValue()
		s.Cost = &v
	}
	if topologyKey != "" {
		s.Domain = placement.Domain(c, topologyKey)
	}
	return s
}

// SpreadFor returns the replica half of a placement's spread constraints: the first
// constraint with a MaxSkew or a MinGroups becomes a [Spread] over its topology key, which is
// returned too (for [NewClusterState]). It returns nil and "" when no constraint asks
// anything of replicas.
func SpreadFor(p federation.Placement) (*Spread, string) {
	for _, sc := range p.SpreadConstraints {
		if sc.MaxSkew > 0 || sc.MinGroups > 0 {
			return &Spread{MinDomains: sc.MinGroups, MaxSkew: sc.MaxSkew}, sc.TopologyKey
		}
	}
	return nil, ""
}

// RequestFor builds a request from a ReplicaSchedulingPreference: its total, rebalance flag,
// cluster preferences, algorithm and strategy, for the given clusters (in placement order).
// An unknown algorithm or strategy returns an error wrapping [ErrInvalidRequest]. The RSP is
// used as given: defaulting (minReplicas 1) is the caller's choice, see
// [Request.Preferences].
func RequestFor(key federation.Key, rsp *federation.ReplicaSchedulingPreference, clusters []ClusterState) (Request, error) {
	alg, err := ParseAlgorithm(rsp.Spec.Algorithm)
	if err != nil {
		return Request{}, err
	}
	st, err := ParseStrategy(rsp.Spec.Strategy)
	if err != nil {
		return Request{}, err
	}
	return Request{
		Key:           key.String(),
		TotalReplicas: rsp.Spec.TotalReplicas,
		Clusters:      clusters,
		Preferences:   rsp.Spec.Clusters,
		Rebalance:     rsp.Spec.Rebalance,
		Algorithm:     alg,
		Strategy:      st,
	}, nil
}
