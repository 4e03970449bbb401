package federation

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedObject is every Federated<Kind> (FederatedDeployment, FederatedService, a federated
// custom resource...). Its kind is "Federated" + the target kind; the group is
// types.federation.k8s.io. The spec says what the member object looks like (Template), where it
// goes (Placement) and how it differs per cluster (Overrides).
//
// Loops mostly handle federated objects as unstructured; [FederatedObjectFromUnstructured] and
// [ToUnstructured] convert.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=federation
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="Propagated",type=string,JSONPath=`.status.conditions[?(@.type=="Propagated")].status`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.aggregated.clusters`
// +kubebuilder:printcolumn:name="Ready Replicas",type=integer,JSONPath=`.status.aggregated.readyReplicas`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.aggregated.replicas`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.syncedRevision`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.status!="True")].reason`,description="The reason of the first condition that is not True"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FederatedObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FederatedSpec   `json:"spec,omitempty"`
	Status FederatedStatus `json:"status,omitempty"`
}

// FederatedObjectList is a list of federated objects of one kind.
//
// +kubebuilder:object:root=true
type FederatedObjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FederatedObject `json:"items"`
}

// FederatedSpec is the desired state of a federated object.
type FederatedSpec struct {
	// Template is the member object without apiVersion, kind, name and namespace, which come
	// from the type and the federated object.
	// +optional
	Template RawObject `json:"template,omitzero"`

	// Placement chooses the member clusters.
	// +optional
	Placement Placement `json:"placement,omitzero"`

	// Overrides change the rendered object per cluster.
	// +optional
	Overrides []ClusterOverride `json:"overrides,omitempty"`

	// RetainReplicas keeps each member's spec.replicas as the member has it (an
	// HorizontalPodAutoscaler runs in the member cluster) instead of the template's or the
	// schedule's.
	// +optional
	RetainReplicas bool `json:"retainReplicas,omitempty"`

	// RevisionHistoryLimit is how many rendered revisions sync keeps for rollback (default 10).
	// +optional
	// +kubebuilder:validation:Minimum=0
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// Rollout stages each new revision through the placed clusters, with gates between the
	// stages and an optional automatic rollback. Absent: every cluster at once.
	// +optional
	Rollout *Rollout `json:"rollout,omitempty"`

	// PropagateDependencies makes the ConfigMaps, Secrets, ServiceAccounts and
	// PersistentVolumeClaims the template's pod template references follow the workload to
	// the clusters it is placed in.
	// +optional
	PropagateDependencies bool `json:"propagateDependencies,omitempty"`
}

// Placement chooses the clusters a federated object goes to. The KubeFed rules: when Clusters
// is present (even empty) it is the list and ClusterSelector is ignored; when absent,
// ClusterSelector decides (nil selects nothing, {} selects every cluster). The other fields
// narrow or order the result further.
type Placement struct {
	// Clusters names the member clusters. Present and empty ([]) selects nothing; absent
	// (omitted or null) defers to ClusterSelector. The distinction survives JSON, deep copy
	// and unstructured conversion.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []ClusterReference `json:"clusters,omitzero"`

	// ClusterSelector selects clusters by their labels when Clusters is absent.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// ExcludeClusters are left out whatever else selects them.
	// +optional
	ExcludeClusters []string `json:"excludeClusters,omitempty"`

	// ClusterAffinity restricts (Required) or orders (Preferred) clusters by region and zone.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// Tolerations let the object go to clusters with matching taints.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// MaxClusters caps how many clusters are selected (the most preferred win).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxClusters *int32 `json:"maxClusters,omitempty"`

	// SpreadConstraints spread the selected clusters, and the replicas divided among them,
	// over failure domains.
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// Failover says how replicas leave a cluster (eviction, rebalance, a placement change)
	// and whether an unhealthy workload moves away from a Ready cluster. Absent: the
	// preference's, else graceful eviction with the default grace period and no application
	// failover.
	// +optional
	Failover *Failover `json:"failover,omitempty"`
}

// ClusterReference names a member cluster (a Cluster object on the host).
type ClusterReference struct {
	// Name is the Cluster's name.
	Name string `json:"name"`
}

// ClusterAffinity expresses region and zone affinity for placement.
type ClusterAffinity struct {
	// Required: only clusters matching this term are eligible.
	// +optional
	Required *AffinityTerm `json:"required,omitempty"`
	// Preferred terms order the eligible clusters (higher summed weight first), which matters
	// with MaxClusters and for tie-breaks.
	// +optional
	Preferred []WeightedAffinityTerm `json:"preferred,omitempty"`
}

// AffinityTerm matches a cluster whose region is one of Regions (when set) and which has at
// least one zone in Zones (when set). An empty term matches every cluster.
type AffinityTerm struct {
	// +optional
	Regions []string `json:"regions,omitempty"`
	// +optional
	Zones []string `json:"zones,omitempty"`
}

// WeightedAffinityTerm is a preferred affinity term with its weight.
type WeightedAffinityTerm struct {
	// Weight is added to a cluster's score when it matches Term.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`
	// Term is the affinity term.
	Term AffinityTerm `json:"term"`
}

// SpreadConstraint spreads clusters (and replicas) over groups of a topology key.
type SpreadConstraint struct {
	// TopologyKey groups clusters: "region", "zone" and "provider" use the Cluster's fields
	// (spec.region, spec.zones, spec.provider, or the well-known labels); any other value is a
	// Cluster label key.
	TopologyKey string `json:"topologyKey"`
	// MinGroups is the least number of groups the selected clusters must cover; placement
	// fails (Unsatisfiable) when no selection of at most maxClusters clusters covers them.
	// On the constraint that sets MaxSkew it also asks the replicas to cover that many
	// groups.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinGroups int32 `json:"minGroups,omitempty"`
	// MaxGroups caps the number of groups used (0 = no cap).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxGroups int32 `json:"maxGroups,omitempty"`
	// MaxSkew bounds how far the replicas of one group may exceed an even share across groups
	// (0 = unbounded). Replicas are divided over one topology key, so at most one constraint
	// may set it. It applies when a ReplicaSchedulingPreference divides replicas (Webster,
	// with the Weighted or CapacityWeighted strategy; another algorithm or strategy is
	// rejected); without a preference every cluster gets the template's replicas and there is
	// no division to bound.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxSkew int64 `json:"maxSkew,omitempty"`
}

// ClusterOverride changes the rendered object for one cluster (ClusterName) or for every
// cluster matching ClusterSelector. For a cluster, selector entries apply first in list order,
// then its named entry, so the most specific wins.
//
// Within one entry the typed overriders apply first, in the order of the fields below
// (Replicas, Images, Containers, Labels, Annotations), each rendered to JSON patch
// operations against the object as it is at that point, and ClusterOverrides last, so a raw
// operation can still adjust what a typed overrider wrote.
//
// +kubebuilder:validation:XValidation:rule="(has(self.clusterName) && size(self.clusterName) > 0) || has(self.clusterSelector)",message="either clusterName or clusterSelector is required",fieldPath=".clusterName"
// +kubebuilder:validation:XValidation:rule="!(has(self.clusterName) && size(self.clusterName) > 0) || !has(self.clusterSelector)",message="may not be set together with clusterName",fieldPath=".clusterSelector"
type ClusterOverride struct {
	// ClusterName names one cluster.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// ClusterSelector selects clusters by label (used when ClusterName is empty).
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// Replicas sets the replica count (at the type's replicas path, spec.replicas by default).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int64 `json:"replicas,omitempty"`
	// Images rewrite parts of container images: registry, repository, tag, digest.
	// +optional
	Images []ImageOverride `json:"images,omitempty"`
	// Containers replace the command or args, and set or remove environment variables, of
	// named containers.
	// +optional
	// +listType=map
	// +listMapKey=name
	Containers []ContainerOverride `json:"containers,omitempty"`
	// Labels sets and removes metadata.labels keys.
	// +optional
	Labels *MapOverride `json:"labels,omitempty"`
	// Annotations sets and removes metadata.annotations keys.
	// +optional
	Annotations *MapOverride `json:"annotations,omitempty"`

	// ClusterOverrides are RFC 6902 JSON patch operations.
	// +optional
	ClusterOverrides []OverrideOp `json:"clusterOverrides,omitempty"`
}

// OverrideOp is one RFC 6902 JSON patch operation. Op defaults to "replace".
type OverrideOp struct {
	// Op is add, remove, replace or test. Empty means replace.
	// +optional
	// +kubebuilder:validation:Enum="";add;remove;replace;test
	Op string `json:"op,omitempty"`
	// Path is a JSON pointer (RFC 6901) into the member object, e.g. /spec/replicas: it
	// starts with "/", has no empty reference token, and escapes "~" as "~0" and "/" as "~1".
	// +kubebuilder:validation:Pattern=`^(/([^/~]|~[01])+)+$`
	Path string `json:"path"`
	// Value is the JSON value for add, replace and test.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *RawValue `json:"value,omitempty"`
}

// Override operation names.
const (
	OpAdd     = "add"
	OpRemove  = "remove"
	OpReplace = "replace"
	OpTest    = "test"
)
