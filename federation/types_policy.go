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
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Conflict",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PropagationSpec `json:"spec,omitempty"`
	// Status is written by package propagation.
	// +optional
	Status PolicyStatus `json:"status,omitzero"`
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
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Conflict",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PropagationSpec `json:"spec,omitempty"`
	// Status is written by package propagation.
	// +optional
	Status PolicyStatus `json:"status,omitzero"`
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

	// Preemption says whether this policy takes over an object another policy already
	// federates, as Karmada's: Always does, from a policy of lower priority, and a
	// PropagationPolicy from any ClusterPropagationPolicy (a ClusterPropagationPolicy never
	// takes one from a PropagationPolicy); Never (the default) leaves the object with the
	// policy that has it.
	// +optional
	Preemption Preemption `json:"preemption,omitempty"`

	// Removal says what happens to an object's member copies when this policy stops
	// federating it while the object stays (the policy is deleted, or no longer selects
	// it): Orphan (the default) leaves them running, without fedkit's labels; Delete
	// deletes them. Deleting the object itself always deletes its copies, unless it
	// carries OrphanAnnotation.
	// +optional
	Removal PolicyRemoval `json:"removal,omitempty"`
}

// Preemption is a policy's answer to an object another policy already federates.
//
// +kubebuilder:validation:Enum="";Always;Never
type Preemption string

const (
	// PreemptAlways takes over objects that a policy this one ranks above federates.
	PreemptAlways Preemption = "Always"
	// PreemptNever leaves them with the policy that federates them (the default).
	PreemptNever Preemption = "Never"
)

// PolicyRemoval is what happens to an object's member copies when its policy stops
// federating it.
//
// +kubebuilder:validation:Enum="";Orphan;Delete
type PolicyRemoval string

const (
	// PolicyRemovalOrphan leaves the member copies running, no longer managed (the default).
	PolicyRemovalOrphan PolicyRemoval = "Orphan"
	// PolicyRemovalDelete deletes them.
	PolicyRemovalDelete PolicyRemoval = "Delete"
)

// PolicyStatus is what package propagation reports about a policy: whether it is valid,
// whether its selectors can select anything the control plane federates, and the objects it
// shares with other policies.
type PolicyStatus struct {
	// ObservedGeneration is the policy generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Valid, Selectable and Conflict (ConditionValid, ConditionSelectable,
	// ConditionConflict).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Conflicts lists objects this policy and another both select, each with the policy
	// that federates it and the one that does not: the first MaxPolicyConflicts of them by
	// kind, namespace and name. The Conflict condition counts them all.
	// +optional
	Conflicts []PolicyConflict `json:"conflicts,omitempty"`
}

// MaxPolicyConflicts bounds status.conflicts of a policy.
const MaxPolicyConflicts = 20

// PolicyConflict is an object two policies select, only one of which federates it.
type PolicyConflict struct {
	// Kind, Namespace and Name name the native object.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Winner is the policy that federates the object, as PolicyAnnotation names it.
	Winner string `json:"winner"`
	// Loser is the policy that selects the object and does not federate it.
	Loser string `json:"loser"`
	// Reason is why the loser does not federate it: ReasonLowerPrecedence,
	// ReasonNotPreempting or ReasonCannotPreempt.
	Reason string `json:"reason"`
}

// Conditions of a policy's status and their reasons.
const (
	// ConditionValid: the policy passes fedkit's validation. False (ReasonInvalidPolicy)
	// names every invalid field; what the policy federated keeps its last valid decision.
	ConditionValid = "Valid"
	// ConditionSelectable: every resource selector names a kind the control plane
	// federates. False (ReasonKindNotFederated) names the selectors that select nothing.
	ConditionSelectable = "Selectable"
	// ConditionConflict: True when another policy selects an object this one selects;
	// status.conflicts names the objects, winners and losers.
	ConditionConflict = "Conflict"

	// ReasonValidPolicy: ConditionValid is True.
	ReasonValidPolicy = "Valid"
	// ReasonInvalidPolicy: ConditionValid is False.
	ReasonInvalidPolicy = "InvalidPolicy"
	// ReasonSelectable: ConditionSelectable is True.
	ReasonSelectable = "Selectable"
	// ReasonKindNotFederated: a selector names a kind (or version) the control plane does
	// not federate: a misspelt kind, one without a type, or Secrets where they are left out.
	ReasonKindNotFederated = "KindNotFederated"
	// ReasonNoConflict: ConditionConflict is False.
	ReasonNoConflict = "NoConflict"
	// ReasonNotPreempting: this policy could take over an object it selects from the
	// policy that federates it, but does not (preemption Never).
	ReasonNotPreempting = "NotPreempting"
	// ReasonLowerPrecedence: an object this policy selects is federated by a policy that
	// ranks above it.
	ReasonLowerPrecedence = "LowerPrecedence"
	// ReasonCannotPreempt: this policy ranks above the policy that federates an object it
	// selects, which had it first, but may not take it over: preemption needs a higher
	// priority, and a ClusterPropagationPolicy never takes an object from a
	// PropagationPolicy.
	ReasonCannotPreempt = "CannotPreempt"
	// ReasonSelectedByOthers: this policy federates objects that other policies select too.
	ReasonSelectedByOthers = "SelectedByOthers"
)

// ResourceSelector picks native objects by apiVersion and kind, and optionally by name,
// namespace (ClusterPropagationPolicy only) and labels.
type ResourceSelector struct {
	// APIVersion of the objects, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[^/]*(/[^/]*)?$`
	APIVersion string `json:"apiVersion"`
	// Kind of the objects, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Name selects one object by name. Default: any name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name,omitempty"`
	// Namespace selects the objects of one namespace; only a ClusterPropagationPolicy may
	// set it (a PropagationPolicy selects in its own namespace). Default: any namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
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
	// RemovalAnnotation on a generated Federated<Kind> records its policy's spec.removal
	// when that is Delete, so the copies are deleted even once the policy is gone.
	RemovalAnnotation = "federation.k8s.io/policy-removal"
)

// Group versions and resources of the policies.
var (
	PropagationPolicyGVR        = CoreGroupVersion.WithResource("propagationpolicies")
	PropagationPolicyGVK        = CoreGroupVersion.WithKind("PropagationPolicy")
	ClusterPropagationPolicyGVR = CoreGroupVersion.WithResource("clusterpropagationpolicies")
	ClusterPropagationPolicyGVK = CoreGroupVersion.WithKind("ClusterPropagationPolicy")
)
