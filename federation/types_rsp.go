package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplicaSchedulingPreference divides a federated workload's replicas among its clusters. It
// has the namespace and name of the federated object it schedules.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rsp,categories=federation
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetKind`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.totalReplicas`
// +kubebuilder:printcolumn:name="Min",type=integer,JSONPath=`.spec.autoscale.minReplicas`,priority=1
// +kubebuilder:printcolumn:name="Max",type=integer,JSONPath=`.spec.autoscale.maxReplicas`,priority=1
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.autoscale.desiredReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ReplicaSchedulingPreference struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ReplicaSchedulingPreferenceSpec `json:"spec,omitempty"`

	// Status is written by the loops: status.autoscale by package autoscale.
	// +optional
	Status ReplicaSchedulingPreferenceStatus `json:"status,omitzero"`
}

// ReplicaSchedulingPreferenceList is a list of ReplicaSchedulingPreferences.
//
// +kubebuilder:object:root=true
type ReplicaSchedulingPreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ReplicaSchedulingPreference `json:"items"`
}

// ReplicaSchedulingPreferenceSpec is the scheduling policy.
type ReplicaSchedulingPreferenceSpec struct {
	// TargetKind is the federated kind scheduled, e.g. FederatedDeployment.
	// +kubebuilder:validation:MinLength=1
	TargetKind string `json:"targetKind"`

	// TotalReplicas is divided among the clusters. With Autoscale it is the total until the
	// autoscaler's first decision, kept within Autoscale's bounds ([FleetTotal]).
	// +kubebuilder:validation:Minimum=0
	TotalReplicas int64 `json:"totalReplicas"`

	// Rebalance lets the scheduler move existing replicas to reach the weighted division;
	// when false, replicas already running stay where they are as far as the bounds allow.
	// +optional
	Rebalance bool `json:"rebalance,omitempty"`

	// RebalancePeriod is how often the schedule is recomputed even without a change
	// (default 5m). With Rebalance false it is also how often running replicas may move: once
	// per period, a cluster below its fair share (a recovered or new one, typically) gets
	// replicas back from the clusters above theirs; in between, running replicas stay put.
	// status.schedule.lastRebalanceTime records when that last moved replicas.
	// +optional
	RebalancePeriod *metav1.Duration `json:"rebalancePeriod,omitempty"`

	// IntersectWithClusterSelector restricts the preference's clusters to those the federated
	// object's placement selects (KubeFed semantics); when false, the preference's own cluster
	// list decides.
	// +optional
	IntersectWithClusterSelector bool `json:"intersectWithClusterSelector,omitempty"`

	// Algorithm divides replicas: Webster (default, bounded Sainte-Laguë) or KubeFed
	// (bit-compatible with KubeFed's planner, for migrations).
	// +optional
	Algorithm Algorithm `json:"algorithm,omitempty"`

	// Strategy chooses the weights: Weighted (default: the weights below), CapacityWeighted
	// (the replicas each cluster can hold), CostOptimized (cheapest clusters first) or
	// Duplicated (every cluster gets TotalReplicas).
	// +optional
	Strategy Strategy `json:"strategy,omitempty"`

	// Clusters maps a cluster name, or "*" for every cluster without its own entry, to its
	// preferences. A cluster with neither gets no replicas.
	// +optional
	Clusters map[string]ClusterPreferences `json:"clusters,omitempty"`

	// Failover applies to the object this preference schedules when its spec.placement has
	// no failover of its own.
	// +optional
	Failover *Failover `json:"failover,omitempty"`

	// Autoscale scales the total with the load the members report (package autoscale), as
	// an HPA scales a Deployment: the scheduler then divides the autoscaler's total
	// (status.autoscale.desiredReplicas) with the cluster preferences above.
	// +optional
	Autoscale *Autoscale `json:"autoscale,omitempty"`
}

// ClusterPreferences bound and weight one cluster's share.
type ClusterPreferences struct {
	// MinReplicas is given before weights are applied (default 1, or MaxReplicas when that
	// is lower, so {maxReplicas: 0} drains the cluster).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReplicas *int64 `json:"minReplicas,omitempty"`
	// MaxReplicas caps the share (nil = unbounded).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxReplicas *int64 `json:"maxReplicas,omitempty"`
	// Weight is the cluster's relative share. When no cluster has a weight, all count equally.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Weight int64 `json:"weight,omitempty"`
}

// Algorithm is how replicas are divided by weight: the value of
// ReplicaSchedulingPreferenceSpec.Algorithm, and the algorithm the scheduler package's Divide
// runs. "" means AlgorithmWebster.
//
// +kubebuilder:validation:Enum="";Webster;KubeFed
type Algorithm string

const (
	// AlgorithmWebster divides by bounded Sainte-Laguë (Webster's method): minimums first,
	// then each replica to the cluster with the largest weight/(2·replicas+1). It is unbiased,
	// house-monotone (one more replica in total moves exactly one replica) and respects
	// weights when scaling down. It is the default.
	AlgorithmWebster Algorithm = "Webster"

	// AlgorithmKubeFed reproduces KubeFed's replica planner bit for bit, so a KubeFed user
	// can migrate without one replica moving.
	AlgorithmKubeFed Algorithm = "KubeFed"
)

// Algorithms returns the algorithms, default first: the values validation accepts besides
// "".
func Algorithms() []Algorithm { return []Algorithm{AlgorithmWebster, AlgorithmKubeFed} }

// Strategy is what a division optimises for: the value of
// ReplicaSchedulingPreferenceSpec.Strategy, and the strategy the scheduler package's Divide
// applies. "" means StrategyWeighted.
//
// +kubebuilder:validation:Enum="";Weighted;CapacityWeighted;CostOptimized;Duplicated
type Strategy string

const (
	// StrategyWeighted divides by the preferences' weights. It is the default.
	StrategyWeighted Strategy = "Weighted"

	// StrategyCapacityWeighted takes each cluster's weight from the number of the object's
	// replicas it can hold (what fits in its headroom plus what the object runs there
	// already), like Karmada's dynamic weights; a cluster whose capacity is unknown weighs 0.
	// Preferences still give the bounds.
	StrategyCapacityWeighted Strategy = "CapacityWeighted"

	// StrategyCostOptimized fills the cheapest clusters first (Cluster spec.cost), up to their
	// maximum and capacity, and spills to the next cheapest. Clusters of equal cost share by
	// weight. Minimums still come first.
	StrategyCostOptimized Strategy = "CostOptimized"

	// StrategyDuplicated gives every candidate the full total (capped by its maximum and
	// capacity): for kinds whose replicas are not divided, and objects without a preference.
	StrategyDuplicated Strategy = "Duplicated"
)

// Strategies returns the strategies, default first: the values validation accepts besides "".
func Strategies() []Strategy {
	return []Strategy{StrategyWeighted, StrategyCapacityWeighted, StrategyCostOptimized, StrategyDuplicated}
}

// WildcardCluster is the ReplicaSchedulingPreferenceSpec.Clusters key that applies to clusters
// without their own entry.
const WildcardCluster = "*"
