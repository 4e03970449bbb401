package federation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TypeConfig links a target type (what member clusters run, e.g. apps/v1 Deployment) with its
// federated type (what the host stores, e.g. types.federation.k8s.io/v1alpha1
// FederatedDeployment). Every loop is constructed for one TypeConfig.
//
// Build one with [NewTypeConfig] for any type, CRDs included, or use a ready-made one
// ([DeploymentType], [ServiceType], ...). Federated kinds share one API group, so two target
// types with the same Kind in different groups cannot both be federated (as in KubeFed).
type TypeConfig struct {
	// Target is the member type's group, version and kind.
	Target schema.GroupVersionKind
	// TargetResource is its plural resource name, e.g. "deployments".
	TargetResource string
	// Namespaced is true for namespaced target types.
	Namespaced bool
	// Federated is the federated type: types.federation.k8s.io/v1alpha1, Kind
	// "Federated" + Target.Kind.
	Federated schema.GroupVersionKind
	// FederatedResource is the federated type's plural resource, e.g. "federateddeployments".
	FederatedResource string
	// ReplicasPath is the dotted path of the replica count in the target object
	// ("spec.replicas"), or "" for types that are not divided among clusters but copied whole.
	ReplicasPath string
	// Rules are the kind's declarative rules (package kinds compiles them), for kinds fedkit
	// has no Go code for; nil for the built-in types and for kinds with the default rules.
	// A FederatedTypeConfig's spec.rules. Loops read them; nothing changes them.
	Rules *KindRules
}

// NewTypeConfig returns the TypeConfig federating target, whose plural resource name is
// resource (e.g. "widgets" for a Widget CRD). replicasPath is the dotted path of its replica
// count, or "" when the type is copied whole to every cluster.
func NewTypeConfig(target schema.GroupVersionKind, resource string, namespaced bool, replicasPath string) TypeConfig {
	return TypeConfig{
		Target:            target,
		TargetResource:    resource,
		Namespaced:        namespaced,
		Federated:         TypesGroupVersion.WithKind("Federated" + target.Kind),
		FederatedResource: "federated" + strings.ToLower(resource),
		ReplicasPath:      replicasPath,
	}
}

// TargetGVR is the member type's resource.
func (t TypeConfig) TargetGVR() schema.GroupVersionResource {
	return t.Target.GroupVersion().WithResource(t.TargetResource)
}

// FederatedGVR is the federated type's resource on the host.
func (t TypeConfig) FederatedGVR() schema.GroupVersionResource {
	return t.Federated.GroupVersion().WithResource(t.FederatedResource)
}

// FederatedNamespaced reports whether the federated type is namespaced: it is when the target
// is, and for Namespace (a FederatedNamespace lives in the namespace it federates, as in
// KubeFed).
func (t TypeConfig) FederatedNamespaced() bool {
	return t.Namespaced || (t.Target.Group == "" && t.Target.Kind == "Namespace")
}

// Divisible reports whether replicas of this type are divided among clusters.
func (t TypeConfig) Divisible() bool { return t.ReplicasPath != "" }

// ReplicasFields splits ReplicasPath for unstructured.NestedInt64 and friends.
func (t TypeConfig) ReplicasFields() []string {
	if t.ReplicasPath == "" {
		return nil
	}
	return strings.Split(t.ReplicasPath, ".")
}

// String returns "Deployment.apps/v1 -> FederatedDeployment".
func (t TypeConfig) String() string {
	return fmt.Sprintf("%s -> %s", t.Target.GroupKind().String()+"/"+t.Target.Version, t.Federated.Kind)
}

// Validate returns an error wrapping ErrUnknownType when a field is missing.
func (t TypeConfig) Validate() error {
	switch {
	case t.Target.Kind == "" || t.Target.Version == "":
		return fmt.Errorf("%w: target kind and version are required", ErrUnknownType)
	case t.TargetResource == "":
		return fmt.Errorf("%w: target resource of %s is required", ErrUnknownType, t.Target.Kind)
	case t.Federated.Kind == "" || t.Federated.Version == "" || t.Federated.Group == "":
		return fmt.Errorf("%w: federated kind of %s is required", ErrUnknownType, t.Target.Kind)
	case t.FederatedResource == "":
		return fmt.Errorf("%w: federated resource of %s is required", ErrUnknownType, t.Target.Kind)
	}
	return nil
}

// Ready-made TypeConfigs for the common built-in types. They are values: copy and change them
// freely.
//
// PersistentVolumeClaimType (FederatedPersistentVolumeClaim) has one rule of its own: a claim
// is never deleted from a member because the object left that cluster's placement (its
// workload moved away: a drain, a failover, a rebalance, a placement edit). Sync releases it
// there instead, and takes it back if the object is placed there again. A claim leaves a
// member only when the FederatedPersistentVolumeClaim is deleted, or when it carries
// [ClaimRemovalAnnotation]: Delete.
var (
	DeploymentType            = NewTypeConfig(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployments", true, "spec.replicas")
	StatefulSetType           = NewTypeConfig(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, "statefulsets", true, "spec.replicas")
	DaemonSetType             = NewTypeConfig(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, "daemonsets", true, "")
	ReplicaSetType            = NewTypeConfig(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, "replicasets", true, "spec.replicas")
	JobType                   = NewTypeConfig(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, "jobs", true, "")
	ServiceType               = NewTypeConfig(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "services", true, "")
	ConfigMapType             = NewTypeConfig(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", true, "")
	SecretType                = NewTypeConfig(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "secrets", true, "")
	ServiceAccountType        = NewTypeConfig(schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, "serviceaccounts", true, "")
	NamespaceType             = NewTypeConfig(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", false, "")
	PersistentVolumeClaimType = NewTypeConfig(schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}, "persistentvolumeclaims", true, "")
	IngressType               = NewTypeConfig(schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, "ingresses", true, "")
)

// BuiltinTypes returns the ready-made TypeConfigs, in a fixed order.
func BuiltinTypes() []TypeConfig {
	return []TypeConfig{
		DeploymentType, StatefulSetType, DaemonSetType, ReplicaSetType, JobType,
		ServiceType, ConfigMapType, SecretType, ServiceAccountType, NamespaceType, IngressType,
		PersistentVolumeClaimType,
	}
}

// BuiltinTypeFor returns the ready-made TypeConfig whose target or federated kind is kind
// ("Deployment" or "FederatedDeployment").
func BuiltinTypeFor(kind string) (TypeConfig, bool) {
	for _, t := range BuiltinTypes() {
		if t.Target.Kind == kind || t.Federated.Kind == kind {
			return t, true
		}
	}
	return TypeConfig{}, false
}
