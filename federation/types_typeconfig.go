package federation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedTypeConfig enables the federation of one API type on the host, as KubeFed's
// object of that name did: the target type members run (a CRD's kind, or a built-in one), its
// Federated<Kind>, where its replicas are, and the kind's rules. It is cluster-scoped and
// named after the target's resource, "widgets.example.com" or "deployments.apps"
// ([TypeConfigName]). A control plane that reads FederatedTypeConfigs
// (controlplane.Options.TypeConfigs) starts the type's loops when one is created, restarts
// them when its spec changes and stops them when it is deleted, without touching a member
// object. `kubectl fed enable` writes one, and the Federated<Kind> CRD beside it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=federation,shortName=ftc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetType.kind`
// +kubebuilder:printcolumn:name="Federated",type=string,JSONPath=`.spec.federatedType.kind`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FederatedTypeConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FederatedTypeConfigSpec   `json:"spec"`
	Status FederatedTypeConfigStatus `json:"status,omitempty"`
}

// FederatedTypeConfigList is a list of FederatedTypeConfigs.
//
// +kubebuilder:object:root=true
type FederatedTypeConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FederatedTypeConfig `json:"items"`
}

// FederatedTypeConfigSpec says which type is federated, and how.
type FederatedTypeConfigSpec struct {
	// TargetType is the type member clusters run.
	TargetType APIResource `json:"targetType"`

	// FederatedType is the host's Federated<Kind>. Absent: types.federation.k8s.io/v1alpha1,
	// kind Federated<Kind>, resource federated<resource>.
	// +optional
	FederatedType *APIResource `json:"federatedType,omitempty"`

	// ReplicasPath is the dotted path of the target's replica count ("spec.replicas"): the
	// scheduler divides it among clusters and sync writes each cluster's share there. Empty:
	// the object is copied whole to every cluster.
	// +optional
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9_-]+)(\.[A-Za-z0-9_-]+)*$`
	ReplicasPath string `json:"replicasPath,omitempty"`

	// Rules are what fedkit must know of the kind that its Go code does not: how to judge a
	// member object healthy and ready, what of its status to collect, which objects it
	// depends on, which member fields to keep. Absent: the defaults for the common shape
	// (see KindRules).
	// +optional
	Rules *KindRules `json:"rules,omitempty"`
}

// APIResource names an API type: group, version, kind, plural resource and scope.
type APIResource struct {
	// Group is the API group; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// PluralName is the resource, e.g. "widgets".
	// +kubebuilder:validation:MinLength=1
	PluralName string `json:"pluralName"`
	// Scope is Namespaced or Cluster.
	// +kubebuilder:validation:Enum=Namespaced;Cluster
	Scope string `json:"scope"`
}

// KindRules are a kind's rules, each a CEL expression over the member object, bound to the
// variable self (a map, as the object's JSON), compiled once per change of the type's
// configuration (package kinds). A rule left empty takes its default, the common shape of
// Kubernetes status:
//
//   - observedGeneration: status.observedGeneration, when the object reports one;
//   - ready: the controller has observed the latest generation (when it reports one), and
//     the Ready condition, else the Available condition, is True when there is one (a kind
//     without status is ready once it exists);
//   - message: why it is not ready (the generation behind, the condition's reason);
//   - readyReplicas, availableReplicas, updatedReplicas: status.readyReplicas,
//     status.availableReplicas, status.updatedReplicas when present.
//
// A rule that does not compile makes the type's configuration invalid (its Ready condition
// False, reason InvalidRules, and an Event); one that fails on an object (a field missing
// that the rule does not guard with has()) makes that member not ready, with the rule's name
// and error in the federated object's Ready condition and an Event. Neither guesses.
type KindRules struct {
	// ObservedGeneration (int) is the generation the member's controller has observed; the
	// object is not ready while it is behind metadata.generation.
	// +optional
	ObservedGeneration string `json:"observedGeneration,omitempty"`
	// Ready (bool) says whether the member object is healthy and ready.
	// +optional
	Ready string `json:"ready,omitempty"`
	// Message (string) says why the object is not ready; evaluated only then.
	// +optional
	Message string `json:"message,omitempty"`
	// ReadyReplicas, AvailableReplicas and UpdatedReplicas (int) are the member's progress,
	// summed into status.aggregated; the desired count is ReplicasPath's.
	// +optional
	ReadyReplicas string `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas string `json:"availableReplicas,omitempty"`
	// +optional
	UpdatedReplicas string `json:"updatedReplicas,omitempty"`
	// Status names values (any JSON) collected from each member into
	// status.clusters[].remoteStatus, e.g. {phase: "self.status.phase"}. Absent: the whole
	// status, as for any kind without rules.
	// +optional
	Status map[string]string `json:"status,omitempty"`
	// Dependencies name the objects a member object refers to, which the dependencies loop
	// makes follow it (spec.propagateDependencies).
	// +optional
	// +listType=atomic
	Dependencies []DependencyRule `json:"dependencies,omitempty"`
	// Retain lists dotted paths of fields a member's controllers own (a cluster IP, an
	// allocated port), which rendering keeps from the member object instead of the template.
	// +optional
	// +listType=atomic
	Retain []string `json:"retain,omitempty"`
}

// DependencyRule names objects of one kind a member object depends on.
type DependencyRule struct {
	// Kind is the dependency's kind.
	// +kubebuilder:validation:Enum=ConfigMap;Secret;ServiceAccount;PersistentVolumeClaim
	Kind string `json:"kind"`
	// Names (list of strings) are their names, in the object's namespace.
	// +kubebuilder:validation:MinLength=1
	Names string `json:"names"`
}

// FederatedTypeConfigStatus is what the control plane says of the configuration.
type FederatedTypeConfigStatus struct {
	// ObservedGeneration is the generation the control plane last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (True: the type's loops run with this generation's configuration;
	// False: why not, InvalidTypeConfig, InvalidRules or Conflict, and whether an older
	// generation's configuration still runs).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
