package federation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster registers a member cluster with the federation: how to reach it, where it is, and
// what may be scheduled there. It is cluster-scoped and lives on the host.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=federation
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Zones",type=string,JSONPath=`.spec.zones`,priority=1
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="Taints",type=string,JSONPath=`.spec.taints[*].key`,priority=1
// +kubebuilder:printcolumn:name="CPU",type=string,JSONPath=`.status.capacity.cpu`,priority=1
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=`.status.capacity.memory`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says how to reach the member cluster and where it runs (required).
	// +kubebuilder:validation:Required
	Spec   ClusterSpec   `json:"spec,omitempty"`
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// ClusterSpec says how to reach a member cluster and where it runs.
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'Pull') || (has(self.apiEndpoint) && size(self.apiEndpoint) > 0)",message="apiEndpoint is required in push mode",fieldPath=".apiEndpoint",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!(has(self.mode) && self.mode == 'Pull') || (!has(self.apiEndpoint) && !has(self.caBundle) && !has(self.secretRef) && !has(self.proxyURL))",message="a pull cluster holds no connection: apiEndpoint, caBundle, secretRef and proxyURL must be empty"
type ClusterSpec struct {
	// Mode is Push (the default, also when empty): the control plane reaches the member's
	// API server at apiEndpoint with the credential of secretRef. Or Pull: an agent in the
	// member reads the cluster's Assignments from its namespace on the host (PullNamespace)
	// and reports back; the host holds no credential for the member, and apiEndpoint,
	// caBundle, secretRef, proxyURL and insecureSkipTLSVerify must be empty.
	// +optional
	Mode ClusterMode `json:"mode,omitempty"`

	// APIEndpoint is the member's API server URL, e.g. https://10.0.0.1:6443. Required in
	// push mode, empty in pull mode.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// CABundle is the PEM bundle that verifies the API server's certificate (base64 in YAML).
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// SecretRef names a Secret in the federation's namespace holding a "token" or a
	// "kubeconfig" key.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// ProxyURL routes requests to the member through an HTTP(S) or SOCKS5 proxy.
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`

	// InsecureSkipTLSVerify turns certificate verification off. It exists for throw-away test
	// clusters only; never set it for a cluster that matters.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`

	// Region is the cluster's region (e.g. us-east-1); falls back to the
	// topology.kubernetes.io/region label.
	// +optional
	Region string `json:"region,omitempty"`

	// Zones are the cluster's availability zones.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Provider is the cloud provider (aws, gcp, azure, ...); falls back to the
	// federation.k8s.io/provider label.
	// +optional
	Provider string `json:"provider,omitempty"`

	// Taints repel federated objects that do not tolerate them.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// Cost is the relative cost of one replica in this cluster, in any unit consistent across
	// clusters; cost-optimised scheduling fills cheaper clusters first.
	// +optional
	Cost *resource.Quantity `json:"cost,omitempty"`
}

// LocalSecretReference names a Secret in the namespace the federation keeps credentials in.
type LocalSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// ClusterStatus is written by the cluster monitor.
type ClusterStatus struct {
	// Conditions: Ready and Offline.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Region and Zones as discovered from the member's nodes.
	// +optional
	Region string `json:"region,omitempty"`
	// +optional
	Zones []string `json:"zones,omitempty"`

	// KubernetesVersion is the member API server's gitVersion.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// Capacity is the sum of the nodes' allocatable resources.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// Available is Capacity minus what running pods request: the headroom scheduling can use.
	// +optional
	Available corev1.ResourceList `json:"available,omitempty"`

	// LastHeartbeatTime is the last time the monitor reached the cluster.
	// +optional
	LastHeartbeatTime *metav1.Time `json:"lastHeartbeatTime,omitempty"`
}
