package federation

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults from the specification.
const (
	// DefaultMinReplicas is a cluster preference's minReplicas when absent.
	DefaultMinReplicas int64 = 1
	// DefaultRebalancePeriod is how often a ReplicaSchedulingPreference is re-evaluated.
	DefaultRebalancePeriod = 5 * time.Minute
	// DefaultStatusPollInterval is how often the status loop polls member clusters.
	DefaultStatusPollInterval = 30 * time.Second
	// DefaultRevisionHistoryLimit is how many revisions sync keeps for rollback.
	DefaultRevisionHistoryLimit int32 = 10
)

// DefaultReplicaSchedulingPreference fills in absent fields in place: rebalancePeriod 5m, and
// for every cluster entry without a minReplicas, minReplicas 1 or its maxReplicas when that is
// lower: {maxReplicas: 0}, the usual way to drain a cluster, defaults to {minReplicas: 0,
// maxReplicas: 0}, as a default must never make a valid preference invalid; and
// spec.autoscale's defaults ([DefaultAutoscale]). Weights are not
// defaulted here: "no weights at all" means an even split, which the scheduler decides. It is
// idempotent.
func DefaultReplicaSchedulingPreference(rsp *ReplicaSchedulingPreference) {
	if rsp.Spec.RebalancePeriod == nil {
		rsp.Spec.RebalancePeriod = &metav1.Duration{Duration: DefaultRebalancePeriod}
	}
	defaultFailover(rsp.Spec.Failover)
	DefaultAutoscale(rsp.Spec.Autoscale)
	for name, p := range rsp.Spec.Clusters {
		if p.MinReplicas == nil {
			m := DefaultMinReplicas
			if p.MaxReplicas != nil && *p.MaxReplicas >= 0 && *p.MaxReplicas < m {
				m = *p.MaxReplicas
			}
			p.MinReplicas = &m
			rsp.Spec.Clusters[name] = p
		}
	}
}

// DefaultFederatedObject fills in absent fields in place: an override op "" becomes "replace",
// revisionHistoryLimit becomes 10, each rollout stage gets its name ("stage-<n>") and
// progressDeadlineSeconds (600), and a spec.placement.failover its purge mode and timers. It is idempotent.
func DefaultFederatedObject(obj *FederatedObject) {
	for i := range obj.Spec.Overrides {
		ops := obj.Spec.Overrides[i].ClusterOverrides
		for j := range ops {
			if ops[j].Op == "" {
				ops[j].Op = OpReplace
			}
		}
	}
	if obj.Spec.RevisionHistoryLimit == nil {
		l := DefaultRevisionHistoryLimit
		obj.Spec.RevisionHistoryLimit = &l
	}
	defaultRollout(obj.Spec.Rollout)
	defaultFailover(obj.Spec.Placement.Failover)
}
