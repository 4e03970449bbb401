package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PurgeMode says what happens to the copy of a workload in a cluster its replicas leave.
// The names are Karmada's.
type PurgeMode string

const (
	// PurgeImmediately removes the copy as soon as the replicas leave, without waiting for
	// the replacements.
	PurgeImmediately PurgeMode = "Immediately"
	// PurgeGraciously keeps the copy running until the clusters gaining the replicas report
	// them available with fresh data, or the grace period ends. It is the default.
	PurgeGraciously PurgeMode = "Graciously"
	// PurgeNever keeps the copy in the cluster, no longer managed by the federation, until a
	// person removes it. It applies to a cluster that leaves the schedule; one the schedule
	// keeps with 0 replicas keeps the federation's object there, scaled to 0.
	PurgeNever PurgeMode = "Never"
)

// Default failover timers.
const (
	// DefaultGracePeriodSeconds bounds how long a cluster losing replicas keeps them while
	// their replacements come up.
	DefaultGracePeriodSeconds int32 = 600
	// DefaultApplicationToleranceSeconds is how long a workload may be unhealthy in a Ready
	// cluster, with fresh data, before its replicas move.
	DefaultApplicationToleranceSeconds int32 = 300
	// DefaultApplicationBackoffSeconds is how long a cluster is avoided for a workload after
	// an application failover moved the workload away from it.
	DefaultApplicationBackoffSeconds int32 = 600
)

// Failover says how replicas leave a cluster: on eviction (a NoExecute taint the placement
// does not tolerate), on a rebalance, or on a placement or preference change. It is set on
// spec.placement, or on the ReplicaSchedulingPreference (used when the placement has none).
type Failover struct {
	// PurgeMode: Immediately, Graciously (default) or Never.
	// +optional
	// +kubebuilder:validation:Enum=Immediately;Graciously;Never
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// GracePeriodSeconds bounds how long a cluster losing replicas keeps running them while
	// the clusters gaining them bring them up (default 600). With PurgeMode Immediately it
	// is not used.
	// +optional
	// +kubebuilder:validation:Minimum=0
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// Application moves a workload's replicas away from a Ready cluster where the workload
	// itself is unhealthy. Absent: no application failover.
	// +optional
	Application *ApplicationFailover `json:"application,omitempty"`
}

// ApplicationFailover moves replicas away from a cluster where the workload is unhealthy
// while the cluster itself is Ready.
type ApplicationFailover struct {
	// ToleranceSeconds is how long the workload may be unhealthy in one cluster, with fresh
	// data, before its replicas move (default 300).
	// +optional
	// +kubebuilder:validation:Minimum=0
	ToleranceSeconds *int32 `json:"toleranceSeconds,omitempty"`

	// BackoffSeconds is how long the cluster is then avoided for this workload (default
	// 600).
	// +optional
	// +kubebuilder:validation:Minimum=0
	BackoffSeconds *int32 `json:"backoffSeconds,omitempty"`
}

// Eviction reasons: why replicas leave a cluster (Eviction.Reason).
const (
	// EvictionTaint: the cluster has a NoExecute taint the placement does not tolerate (or
	// no longer tolerates: its tolerationSeconds ran out).
	EvictionTaint = "TaintNoExecute"
	// EvictionPlacement: the placement or the preference no longer selects the cluster, or
	// gives it fewer replicas.
	EvictionPlacement = "PlacementChanged"
	// EvictionRebalance: a rebalance moved replicas away from the cluster.
	EvictionRebalance = "Rebalanced"
	// EvictionApplication: the workload was unhealthy in the cluster for longer than its
	// application failover tolerates.
	EvictionApplication = "ApplicationFailure"
)

// Eviction is one cluster losing replicas, kept in status.schedule until it is done: while
// it lasts, the cluster keeps running Keep replicas (the schedule lists them) until the
// clusters gaining the replicas report them available with fresh data, or Deadline passes.
// The scheduler writes it; sync carries it out like the rest of the schedule.
type Eviction struct {
	// Cluster is the cluster losing replicas.
	Cluster string `json:"cluster"`
	// Reason is one of the Eviction* reasons.
	Reason string `json:"reason"`
	// Message says why, and what the eviction waits for.
	// +optional
	Message string `json:"message,omitempty"`
	// Replicas is what the cluster is to run once the eviction is done (0: it leaves).
	// +kubebuilder:validation:Minimum=0
	Replicas int64 `json:"replicas"`
	// Keep is what the cluster runs meanwhile (its replicas when the eviction began).
	// +kubebuilder:validation:Minimum=0
	Keep int64 `json:"keep"`
	// PurgeMode is the mode the eviction began with.
	PurgeMode PurgeMode `json:"purgeMode"`
	// Since is when the eviction began.
	Since metav1.Time `json:"since"`
	// Deadline is when the cluster stops keeping its replicas, ready replacements or not.
	// It is unset once it has passed while the cluster was out of reach (not Ready, or its
	// data stale): the copy stays until the cluster is back, and a new grace period begins
	// then. (An eviction with Release has none either.)
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
	// Release is set when an eviction with PurgeMode Never has ended and the cluster left
	// the schedule: sync releases the copy there (removes fedkit's labels and annotations,
	// as orphaning does) instead of deleting it. The scheduler drops the eviction once
	// status.clusters no longer lists the cluster.
	// +optional
	Release bool `json:"release,omitempty"`
}

// AvoidedCluster is a cluster an object's replicas stay away from until a time: the
// back-off after an application failover moved them away.
type AvoidedCluster struct {
	// Cluster is the cluster's name.
	Cluster string `json:"cluster"`
	// Reason is why (EvictionApplication).
	Reason string `json:"reason"`
	// Until is when the cluster may be chosen again.
	Until metav1.Time `json:"until"`
}
