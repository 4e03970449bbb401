package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedStatus is written by the loops; each owns its fields: the scheduler writes Schedule
// and the Scheduled condition, sync writes Clusters[].Propagation/Revision, SyncedRevision,
// Rollout and the Propagated and RolledBack conditions, the status collector writes the
// observed fields, Aggregated and the Ready condition.
type FederatedStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Scheduled, Propagated, Ready, RolledBack.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Schedule is the scheduler's decision: replicas per cluster.
	// +optional
	Schedule *Schedule `json:"schedule,omitempty"`

	// Clusters has one entry per placed cluster.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []MemberStatus `json:"clusters,omitempty"`

	// Aggregated sums the members' workload status.
	// +optional
	Aggregated *AggregatedStatus `json:"aggregated,omitempty"`

	// SyncedRevision is the revision last pushed to every placed cluster.
	// +optional
	SyncedRevision int64 `json:"syncedRevision,omitempty"`

	// Rollout is where a staged rollout (spec.rollout) stands; sync writes it.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
}

// Schedule is the replicas per cluster decided by the scheduler.
type Schedule struct {
	// Clusters in placement order.
	// +optional
	Clusters []ScheduledCluster `json:"clusters,omitempty"`

	// LastRebalanceTime is when a schedule with rebalance off last gave clusters below their
	// fair share replicas back (which the ReplicaSchedulingPreference's rebalancePeriod
	// allows once per period). Absent: never.
	// +optional
	LastRebalanceTime *metav1.Time `json:"lastRebalanceTime,omitempty"`

	// NotReady lists, sorted, the clusters placement would have selected but left out only
	// because they were not ready (their not-ready or unreachable taint) when the schedule
	// was made. Sync does not act on the schedule while one of them is Ready again: the
	// scheduler has yet to place it, and its member objects are not to be deleted meanwhile.
	// +optional
	NotReady []string `json:"notReady,omitempty"`

	// Evictions are the clusters losing replicas whose replacements are not ready yet:
	// each keeps running its replicas (Clusters lists them) until they are, or until its
	// deadline.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	Evictions []Eviction `json:"evictions,omitempty"`

	// Avoided are the clusters the object stays away from until a time (the back-off after
	// an application failover).
	// +optional
	// +listType=map
	// +listMapKey=cluster
	Avoided []AvoidedCluster `json:"avoided,omitempty"`
}

// ScheduledCluster is one cluster's share.
type ScheduledCluster struct {
	Name string `json:"name"`
	// +kubebuilder:validation:Minimum=0
	Replicas int64 `json:"replicas"`
}

// The propagation reasons (MemberStatus.Propagation) other loops read: package sync writes
// them. The scheduler holds an eviction of a cluster sync cannot act in now (the first two),
// as nothing can be removed there until it is back.
const (
	// PropagationClusterNotReady: the Cluster's Ready condition is not True.
	PropagationClusterNotReady = "ClusterNotReady"
	// PropagationClusterUnreachable: the member's API server could not be reached.
	PropagationClusterUnreachable = "ClusterUnreachable"
	// PropagationWaitingForRemoval: the member object is being deleted and its finalizers
	// hold it (a foreground deletion, a member controller's cleanup). Sync lists the cluster
	// until the object is gone (NotFound); what runs there is going, so the scheduler counts
	// none of it as running and evicts nothing there, and a dependency stays there until then.
	PropagationWaitingForRemoval = "WaitingForRemoval"
)

// The propagation reasons of a cluster where sync cannot write the object although the
// cluster answers (MemberStatus.Propagation): package sync writes them (its Reason* constants
// are these), and the scheduler gives such a cluster no new replicas (PropagationBlocked).
const (
	// PropagationClusterNotFound: the cluster set has no client for the cluster yet.
	PropagationClusterNotFound = "ClusterNotFound"
	// PropagationCreationFailed, PropagationUpdateFailed: the member's API server refused
	// the write (Forbidden, a quota, an admission webhook...).
	PropagationCreationFailed = "CreationFailed"
	PropagationUpdateFailed   = "UpdateFailed"
	// PropagationAlreadyExists: an object of the same name that the federation did not
	// create is there.
	PropagationAlreadyExists = "AlreadyExists"
	// PropagationManagedByOther: the object there belongs to another federation.
	PropagationManagedByOther = "ManagedByOther"
	// PropagationRenderFailed: the template and overrides do not render for the cluster.
	PropagationRenderFailed = "RenderFailed"
	// PropagationTypeNotServed: the member does not serve the target type.
	PropagationTypeNotServed = "TypeNotServed"
	// PropagationNamespaceTerminating: the member namespace is being deleted.
	PropagationNamespaceTerminating = "NamespaceTerminating"
	// PropagationNamespaceNotPlaced: the member namespace does not exist and the
	// FederatedNamespace that governs it does not place it there.
	PropagationNamespaceNotPlaced = "NamespaceNotPlaced"
)

// PropagationBlocked reports whether a status.clusters[].propagation reason says that sync
// cannot write the object in that cluster now: the cluster is not ready or out of reach, has
// no client, refuses the write, holds an object of the same name that is not the
// federation's, cannot render or serve it, or its namespace is being deleted or will not
// come. The scheduler gives such a cluster no new replicas. A reason that passes by itself
// (WaitingForNamespace, WaitingForRemoval) or is about a deletion does not block.
func PropagationBlocked(reason string) bool {
	switch reason {
	case PropagationClusterNotReady, PropagationClusterUnreachable, PropagationClusterNotFound,
		PropagationCreationFailed, PropagationUpdateFailed, PropagationAlreadyExists, PropagationManagedByOther,
		PropagationRenderFailed, PropagationTypeNotServed, PropagationNamespaceTerminating, PropagationNamespaceNotPlaced:
		return true
	}
	return false
}

// MemberStatus is what the federation knows about the member object in one cluster.
type MemberStatus struct {
	// Name is the cluster's name.
	Name string `json:"name"`
	// Propagation is "" when the member object is current, otherwise a reason such as
	// ClusterNotReady, CreationFailed, UpdateFailed, ManagedByOther or RenderFailed.
	// +optional
	Propagation string `json:"propagation,omitempty"`
	// Message explains a non-empty Propagation.
	// +optional
	Message string `json:"message,omitempty"`
	// Revision is the federated revision the member object was rendered from.
	// +optional
	Revision int64 `json:"revision,omitempty"`

	// Observed workload fields (nil when the kind has none or they were not observed).
	// +optional
	Replicas *int64 `json:"replicas,omitempty"`
	// +optional
	ReadyReplicas *int64 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int64 `json:"availableReplicas,omitempty"`
	// +optional
	UpdatedReplicas *int64 `json:"updatedReplicas,omitempty"`
	// ObservedGeneration of the member object, when it reports one.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
	// RemoteStatus holds selected fields of the member object's status for kinds without
	// replica counts (a Service's loadBalancer, for example).
	// +optional
	RemoteStatus *RawObject `json:"remoteStatus,omitempty"`
	// Ready is whether the member object was up to date and fully available when last
	// observed, as the status collector judges its kind; nil when not observed.
	// +optional
	Ready *bool `json:"ready,omitempty"`
	// ObservedRevision is the revision annotation (federation.k8s.io/revision) of the member
	// object as last observed: the revision the member reports running, where Revision is
	// the one sync rendered for it.
	// +optional
	ObservedRevision int64 `json:"observedRevision,omitempty"`

	// UnhealthySince is when the status collector first observed, with fresh data, the
	// member object running the revision sync rendered for it (ObservedRevision equal to
	// Revision) but not Ready by its kind's health rule, nor progressing (a Deployment whose
	// rollout progresses within progressDeadlineSeconds with its availability held); nil
	// while it is Ready or progressing, not observed, or stale. Application failover
	// (spec.placement.failover.application) reads it: only a stalled or failing workload
	// counts toward toleranceSeconds.
	// +optional
	UnhealthySince *metav1.Time `json:"unhealthySince,omitempty"`

	// LastObserved is when these fields were read from the member cluster.
	// +optional
	LastObserved *metav1.Time `json:"lastObserved,omitempty"`
	// Stale is true when the cluster could not be read recently; the observed fields are the
	// last known ones and are left out of Aggregated.
	// +optional
	Stale bool `json:"stale,omitempty"`
}

// AggregatedStatus sums the fresh (non-stale) clusters' observed fields.
type AggregatedStatus struct {
	Replicas          int64 `json:"replicas"`
	ReadyReplicas     int64 `json:"readyReplicas"`
	AvailableReplicas int64 `json:"availableReplicas"`
	UpdatedReplicas   int64 `json:"updatedReplicas"`
	// Clusters counts the clusters that contributed.
	Clusters int32 `json:"clusters"`
	// StaleClusters counts placed clusters whose data was too old to count.
	StaleClusters int32 `json:"staleClusters"`
}
