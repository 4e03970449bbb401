package migrate

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeFed v0.10's API groups and versions this package reads.
const (
	KubeFedCoreGroupVersion       = "core.kubefed.io/v1beta1"
	KubeFedTypesGroupVersion      = "types.kubefed.io/v1beta1"
	KubeFedSchedulingGroupVersion = "scheduling.kubefed.io/v1alpha1"
)

// The shapes below mirror KubeFed v0.10's API types (sigs.k8s.io/kubefed/pkg/apis), field for
// field, so that the main module does not depend on KubeFed or its old Kubernetes libraries.

type kubeFedCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		APIEndpoint string `json:"apiEndpoint"`
		CABundle    []byte `json:"caBundle,omitempty"`
		SecretRef   struct {
			Name string `json:"name"`
		} `json:"secretRef"`
		DisabledTLSValidations []string `json:"disabledTLSValidations,omitempty"`
		ProxyURL               string   `json:"proxyURL"`
	} `json:"spec"`
	Status json.RawMessage `json:"status,omitempty"`
}

type kubeFedAPIResource struct {
	Group      string `json:"group,omitempty"`
	Version    string `json:"version"`
	Kind       string `json:"kind"`
	PluralName string `json:"pluralName"`
	Scope      string `json:"scope"`
}

type kubeFedTypeConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		TargetType       kubeFedAPIResource  `json:"targetType"`
		Propagation      string              `json:"propagation"`
		FederatedType    kubeFedAPIResource  `json:"federatedType"`
		StatusType       *kubeFedAPIResource `json:"statusType,omitempty"`
		StatusCollection *string             `json:"statusCollection,omitempty"`
	} `json:"spec"`
	Status json.RawMessage `json:"status,omitempty"`
}

type kubeFedClusterPreferences struct {
	MinReplicas int64  `json:"minReplicas,omitempty"`
	MaxReplicas *int64 `json:"maxReplicas,omitempty"`
	Weight      int64  `json:"weight,omitempty"`
}

type kubeFedRSP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		TargetKind                   string                               `json:"targetKind"`
		TotalReplicas                int32                                `json:"totalReplicas"`
		Rebalance                    bool                                 `json:"rebalance,omitempty"`
		IntersectWithClusterSelector bool                                 `json:"intersectWithClusterSelector"`
		Clusters                     map[string]kubeFedClusterPreferences `json:"clusters,omitempty"`
	} `json:"spec,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
}

type kubeFedOverrideOp struct {
	Op    string          `json:"op,omitempty"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

type kubeFedFederated struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Template  map[string]any `json:"template,omitempty"`
		Placement struct {
			Clusters []struct {
				Name string `json:"name"`
			} `json:"clusters,omitempty"`
			ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
		} `json:"placement,omitempty"`
		Overrides []struct {
			ClusterName      string              `json:"clusterName"`
			ClusterOverrides []kubeFedOverrideOp `json:"clusterOverrides,omitempty"`
		} `json:"overrides,omitempty"`
	} `json:"spec,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
}
