package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplicaSchedulingPreference divides a federated workload's replicas among its clusters. It
// has the namespace and name of the federated object it schedules.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rsp,categories=federation
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetKind`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.totalReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ReplicaSchedulingPreference struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ReplicaSchedulingPreferenceSpec `json:"spec,omitempty"`
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

	// TotalReplicas is divided among the clusters.
	// +kubebuilder:validation:Minimum=0
	TotalReplicas int64 `json:"totalReplicas"`

	// Rebalance lets the scheduler move existing replicas to reach the weighted division;
	// when false, replicas already running stay where they are as far as the bounds allow.
	// +optional
	Rebalance bool `json:"rebalance,omitempty"`

	// RebalancePeriod is how often the schedule is recomputed even without a change, so a
	// recovered or new cluster gets replicas back (default 5m).
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
	// +kubebuilder:validation:Enum="";Webster;KubeFed
	Algorithm string `json:"algorithm,omitempty"`

	// Strategy chooses the weights: Weighted (default: the weights below), CapacityWeighted
	// (each cluster's available capacity), CostOptimized (cheapest clusters first) or Duplicated
	// (every cluster gets TotalReplicas).
	// +optional
	// +kubebuilder:validation:Enum="";Weighted;CapacityWeighted;CostOptimized;Duplicated
	Strategy string `json:"strategy,omitempty"`

	// Clusters maps a cluster name, or "*" for every cluster without its own entry, to its
	// preferences. A cluster with neither gets no replicas.
	// +optional
	Clusters map[string]ClusterPreferences `json:"clusters,omitempty"`
}

// ClusterPreferences bound and weight one cluster's share.
type ClusterPreferences struct {
	// MinReplicas is given before weights are applied (default 1).
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

// Values of ReplicaSchedulingPreferenceSpec.Algorithm and .Strategy.
const (
	AlgorithmWebster = "Webster"
	AlgorithmKubeFed = "KubeFed"

	StrategyWeighted         = "Weighted"
	StrategyCapacityWeighted = "CapacityWeighted"
	StrategyCostOptimized    = "CostOptimized"
	StrategyDuplicated       = "Duplicated"

	// WildcardCluster is the Clusters key that applies to clusters without their own entry.
	WildcardCluster = "*"
)
