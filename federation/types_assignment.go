package federation

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterMode says who opens the connection between the federation and a member cluster.
//
// +kubebuilder:validation:Enum=Push;Pull
type ClusterMode string

const (
	// ClusterModePush (the default, also ""): the control plane writes to the member's API
	// server, with the credential the Cluster's secretRef names.
	ClusterModePush ClusterMode = "Push"
	// ClusterModePull: an agent in the member (package agent) reads the cluster's
	// Assignments from the cluster's namespace on the host ([PullNamespace]), applies them
	// and reports back. The host holds no credential for the member.
	ClusterModePull ClusterMode = "Pull"
)

// Pull reports whether the cluster is registered in pull mode.
func (s *ClusterSpec) Pull() bool { return s.Mode == ClusterModePull }

// PullNamespacePrefix starts the name of every pull cluster's namespace on the host.
const PullNamespacePrefix = "fedkit-cluster-"

// PullNamespace is the namespace on the host of the pull cluster named cluster: its
// Assignments, their reports and its agent's Lease live there, and its agent's identity is
// confined to it. A pull cluster's name must leave a valid namespace name
// ([ValidateCluster]).
func PullNamespace(cluster string) string { return PullNamespacePrefix + cluster }

// AgentLeaseName is the name of the Lease a pull cluster's agent renews in its namespace on
// the host. The cluster monitor judges a pull cluster by its age, with the thresholds it
// applies to a push cluster's probes.
const AgentLeaseName = "fedkit-agent"

// AssignedResourceLabel is on every Assignment: the member object's resource and group,
// "deployments.apps" ("configmaps" for the core group), so that listing one resource's
// Assignments is a label-selected list. Absent when the value would not fit a label (63
// characters); readers check spec.resource all the same.
const AssignedResourceLabel = "federation.k8s.io/assigned-resource"

// AssignmentGVR and AssignmentGVK address Assignments (namespaced) on the host.
var (
	AssignmentGVR = CoreGroupVersion.WithResource("assignments")
	AssignmentGVK = CoreGroupVersion.WithKind("Assignment")
)

// AssignmentChange is what the agent does with an Assignment's manifest.
//
// +kubebuilder:validation:Enum=Apply;Delete;Orphan
type AssignmentChange string

const (
	// AssignmentApply: the member object is the manifest, with what the member owns retained
	// (created when absent, updated when it differs or drifted).
	AssignmentApply AssignmentChange = "Apply"
	// AssignmentDelete: the member object is deleted, if it carries the federation's
	// identity.
	AssignmentDelete AssignmentChange = "Delete"
	// AssignmentOrphan: the member object stays, with the labels and annotations of the
	// manifest (the federation's removed).
	AssignmentOrphan AssignmentChange = "Orphan"
)

// Assignment is one member object assigned to one pull cluster, rendered for it: what sync
// would have written to the member's API server in push mode. It lives in the cluster's
// namespace on the host ([PullNamespace]), one per member object (a federated object's, or a
// namespace sync creates for it). Sync writes its spec; the cluster's agent reads it, acts,
// and writes its status: the report. As Karmada's Work and OCM's ManifestWork.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=federation
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Resource",type=string,JSONPath=`.spec.resource.resource`
// +kubebuilder:printcolumn:name="Change",type=string,JSONPath=`.spec.change`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Assignment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AssignmentSpec   `json:"spec"`
	Status AssignmentStatus `json:"status,omitempty"`
}

// AssignmentList is a list of Assignments.
//
// +kubebuilder:object:root=true
type AssignmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Assignment `json:"items"`
}

// AssignedResource is a member object's group, version and resource.
type AssignedResource struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`
	// +kubebuilder:validation:MinLength=1
	Resource string `json:"resource"`
}

// GVR returns the resource as a GroupVersionResource.
func (r AssignedResource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// AssignedResourceOf is gvr as an AssignedResource.
func AssignedResourceOf(gvr schema.GroupVersionResource) AssignedResource {
	return AssignedResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource}
}

// AssignmentSpec is the decided change of one member object in one pull cluster.
type AssignmentSpec struct {
	// Resource is the member object's resource.
	Resource AssignedResource `json:"resource"`

	// Change is what the agent does (Apply, Delete, Orphan).
	Change AssignmentChange `json:"change"`

	// Manifest is the member object: as rendered for the cluster (Apply), as it is to be
	// left (Orphan), or its name and namespace (Delete). It never carries a resourceVersion
	// or a uid: those are the member's.
	Manifest RawObject `json:"manifest"`

	// PropagationPolicy is a Delete's propagationPolicy (sync's Options.DeletionPropagation).
	// +optional
	PropagationPolicy *metav1.DeletionPropagation `json:"propagationPolicy,omitempty"`
}

// AssignmentStatus is the agent's report: what the status collector and sync read of the
// member object, as the agent last saw it.
type AssignmentStatus struct {
	// ObservedGeneration is the generation of the spec the agent last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Object is the member object as the agent last read it, status included; absent when
	// the member has none.
	// +optional
	Object RawObject `json:"object,omitzero"`

	// Conditions: Applied (True when the member object is as the spec of
	// observedGeneration says; False with the member's error or the reason it is left
	// alone).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Metrics are the workload's pods and their resource usage as the agent last read them
	// from the member (its pods and metrics.k8s.io), for the autoscaler: the hub never reaches
	// a pull member's metrics API. Only a workload (an object with spec.selector) has them.
	// +optional
	Metrics *WorkloadMetrics `json:"metrics,omitempty"`
}

// WorkloadMetrics is what a pull cluster's agent reports of a workload's pods: what a
// HorizontalPodAutoscaler's controller reads in its own cluster for Resource and
// ContainerResource metrics (each pod's phase, readiness, requests and usage), per pod, so
// the autoscaler counts ready, unready and missing pods as an HPA does.
type WorkloadMetrics struct {
	// Read is when the agent read them (the agent's clock).
	Read metav1.Time `json:"read"`

	// Pods are the workload's pods (its spec.selector's).
	// +optional
	// +listType=atomic
	Pods []PodMetrics `json:"pods,omitempty"`

	// Failed says why the member's metrics.k8s.io could not be read (not served, an
	// error); the pods are listed without usage then. The autoscaler never reads that as 0.
	// +optional
	Failed string `json:"failed,omitempty"`
}

// PodMetrics is one pod of a workload in a pull cluster's report.
type PodMetrics struct {
	Name string `json:"name"`

	// Phase is status.phase; Deleting reports a deletionTimestamp.
	// +optional
	Phase corev1.PodPhase `json:"phase,omitempty"`
	// +optional
	Deleting bool `json:"deleting,omitempty"`

	// Ready is the status of the pod's Ready condition, ReadySince its lastTransitionTime.
	// +optional
	Ready corev1.ConditionStatus `json:"ready,omitempty"`
	// +optional
	ReadySince *metav1.Time `json:"readySince,omitempty"`

	// Started is status.startTime.
	// +optional
	Started *metav1.Time `json:"started,omitempty"`

	// Sampled and Window are the pod's PodMetrics timestamp and window; absent when
	// metrics.k8s.io reported no usage for the pod (a missing pod).
	// +optional
	Sampled *metav1.Time `json:"sampled,omitempty"`
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`

	// Requests are the requests of the pod's containers (restartable init containers
	// included); Usage, when Sampled, the usage of each container PodMetrics reported.
	// +optional
	// +listType=atomic
	Requests []ContainerResources `json:"requests,omitempty"`
	// +optional
	// +listType=atomic
	Usage []ContainerResources `json:"usage,omitempty"`
}

// ContainerResources is one container's requests or usage.
type ContainerResources struct {
	Name string `json:"name"`
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
}

// ConditionApplied is an Assignment's condition: the agent carried out the change of
// status.observedGeneration.
const ConditionApplied = "Applied"

// AssignmentName is the name of the Assignment of the member object (gvr, namespace, name):
// "deployments.apps.<namespace>.<name>", the core group spelled "core" and a cluster-scoped
// object's namespace "cluster-scoped". Names are DNS subdomains, so it is unique per cluster.
func AssignmentName(gvr schema.GroupVersionResource, namespace, name string) string {
	group := gvr.Group
	if group == "" {
		group = "core"
	}
	if namespace == "" {
		namespace = "cluster-scoped"
	}
	n := strings.Join([]string{gvr.Resource, group, namespace, name}, ".")
	if len(n) <= maxAssignmentName {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return strings.TrimRight(n[:maxAssignmentName-17], ".-") + "." + hex.EncodeToString(sum[:8])
}

// maxAssignmentName is the longest object name (a DNS subdomain).
const maxAssignmentName = 253

// AssignedResourceValue is the value of [AssignedResourceLabel] for gvr; ok is false when it
// is not a valid label value.
func AssignedResourceValue(gvr schema.GroupVersionResource) (v string, ok bool) {
	v = gvr.Resource
	if gvr.Group != "" {
		v += "." + gvr.Group
	}
	return v, len(v) <= 63
}
