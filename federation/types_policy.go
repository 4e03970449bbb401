package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationPolicy federates the native objects of its namespace that its resource
// selectors pick: package propagation turns each one into the Federated<Kind> the other
// loops handle, with the policy's placement, overrides and scheduling.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pp,categories=federation
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Conflict",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PropagationSpec `json:"spec,omitempty"`
}

// PropagationPolicyList is a list of PropagationPolicies.
//
// +kubebuilder:object:root=true
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PropagationPolicy `json:"items"`
}

// ClusterPropagationPolicy is a PropagationPolicy for every namespace. A namespaced policy
// that matches the same object wins at equal priority.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cpp,categories=federation
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Conflict",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PropagationSpec `json:"spec,omitempty"`
}

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicies.
//
// +kubebuilder:object:root=true
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPropagationPolicy `json:"items"`
}

// PropagationSpec selects native objects and says how to federate them. Its fields after
// the selectors and priority are those of a Federated<Kind>'s spec.
type PropagationSpec struct {
	// ResourceSelectors pick the native objects; an object matching any one is selected.
	// +kubebuilder:validation:MinItems=1
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Priority orders policies that select the same object: the highest wins (default 0).
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// Placement becomes the generated object's spec.placement.
	// +optional
	Placement Placement `json:"placement,omitzero"`

	// Overrides become the generated object's spec.overrides.
	// +optional
	Overrides []ClusterOverride `json:"overrides,omitempty"`

	// Scheduling, when set, divides the replicas: the loop writes a
	// ReplicaSchedulingPreference of the object's name, owned by the generated object.
	// Without it, a ReplicaSchedulingPreference of that name written by hand still applies.
	// +optional
	Scheduling *PolicyScheduling `json:"scheduling,omitempty"`

	// Rollout becomes the generated object's spec.rollout.
	// +optional
	Rollout *Rollout `json:"rollout,omitempty"`

	// RetainReplicas becomes the generated object's spec.retainReplicas.
	// +optional
	RetainReplicas bool `json:"retainReplicas,omitempty"`

	// PropagateDependencies becomes the generated object's spec.propagateDependencies.
	// +optional
	PropagateDependencies bool `json:"propagateDependencies,omitempty"`

	// ConflictResolution says what sync does with a member object of the same name that
	// the federation did not create: Abort (default) reports a conflict, Overwrite adopts
	// it (the generated object gets AdoptAnnotation).
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`
}

// ResourceSelector picks native objects by apiVersion and kind, and optionally by name,
// namespace (ClusterPropagationPolicy only) and labels.
type ResourceSelector struct {
	// APIVersion of the objects, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind of the objects, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Name selects one object by name. Default: any name.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace selects the objects of one namespace; only a ClusterPropagationPolicy may
	// set it (a PropagationPolicy selects in its own namespace). Default: any namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// LabelSelector selects by labels; ignored when Name is set. Default: any labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// PolicyScheduling is a ReplicaSchedulingPreference's spec without its targetKind (the
// generated object's kind) and with totalReplicas optional.
type PolicyScheduling struct {
	// TotalReplicas is divided among the clusters. Default: the native object's replicas.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TotalReplicas *int64 `json:"totalReplicas,omitempty"`
	// Rebalance is the preference's spec.rebalance.
	// +optional
	Rebalance bool `json:"rebalance,omitempty"`
	// RebalancePeriod is the preference's spec.rebalancePeriod.
	// +optional
	RebalancePeriod *metav1.Duration `json:"rebalancePeriod,omitempty"`
	// IntersectWithClusterSelector is the preference's spec.intersectWithClusterSelector.
	// +optional
	IntersectWithClusterSelector bool `json:"intersectWithClusterSelector,omitempty"`
	// Algorithm is the preference's spec.algorithm.
	// +optional
	Algorithm Algorithm `json:"algorithm,omitempty"`
	// Strategy is the preference's spec.strategy.
	// +optional
	Strategy Strategy `json:"strategy,omitempty"`
	// Clusters is the preference's spec.clusters.
	// +optional
	Clusters map[string]ClusterPreferences `json:"clusters,omitempty"`
	// Failover is the preference's spec.failover.
	// +optional
	Failover *Failover `json:"failover,omitempty"`
}

// ConflictResolution is a policy's answer to a member object the federation did not create.
//
// +kubebuilder:validation:Enum="";Abort;Overwrite
type ConflictResolution string

const (
	// ConflictAbort leaves such a member object alone and reports a conflict (the default).
	ConflictAbort ConflictResolution = "Abort"
	// ConflictOverwrite adopts it: the generated object carries AdoptAnnotation "true".
	ConflictOverwrite ConflictResolution = "Overwrite"
)

// Labels and annotations of package propagation.
const (
	// PolicyAnnotation on a native object and on its generated Federated<Kind> names the
	// policy that won: "<namespace>/<name>" for a PropagationPolicy, "cluster/<name>" for
	// a ClusterPropagationPolicy.
	PolicyAnnotation = "federation.k8s.io/policy"
	// GeneratedByPropagation is [GeneratedByLabel]'s value on a Federated<Kind> generated
	// from a native object. The loop never touches a Federated<Kind> without it.
	GeneratedByPropagation = "propagation"
)

// Group versions and resources of the policies.
var (
	PropagationPolicyGVR        = CoreGroupVersion.WithResource("propagationpolicies")
	PropagationPolicyGVK        = CoreGroupVersion.WithKind("PropagationPolicy")
	ClusterPropagationPolicyGVR = CoreGroupVersion.WithResource("clusterpropagationpolicies")
	ClusterPropagationPolicyGVK = CoreGroupVersion.WithKind("ClusterPropagationPolicy")
)
