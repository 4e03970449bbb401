package federation

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// API groups. All are served at version v1alpha1.
const (
	// Version is the version of every fedkit API group.
	Version = "v1alpha1"
	// TypesGroup holds the Federated<Kind> types, one CRD per federated kind.
	TypesGroup = "types.federation.k8s.io"
	// CoreGroup holds Cluster and ReplicaSchedulingPreference.
	CoreGroup = "core.federation.k8s.io"
	// DNSGroup holds ServiceDNSRecord and Domain (package dnsrecord).
	DNSGroup = "multiclusterdns.federation.k8s.io"
)

// Group versions and the resources of the core group.
var (
	TypesGroupVersion = schema.GroupVersion{Group: TypesGroup, Version: Version}
	CoreGroupVersion  = schema.GroupVersion{Group: CoreGroup, Version: Version}
	DNSGroupVersion   = schema.GroupVersion{Group: DNSGroup, Version: Version}

	// ClusterGVR and ClusterGVK address Cluster objects (cluster-scoped) on the host.
	ClusterGVR = CoreGroupVersion.WithResource("clusters")
	ClusterGVK = CoreGroupVersion.WithKind("Cluster")

	// ReplicaSchedulingPreferenceGVR and ReplicaSchedulingPreferenceGVK address
	// ReplicaSchedulingPreference objects (namespaced) on the host.
	ReplicaSchedulingPreferenceGVR = CoreGroupVersion.WithResource("replicaschedulingpreferences")
	ReplicaSchedulingPreferenceGVK = CoreGroupVersion.WithKind("ReplicaSchedulingPreference")

	// SecretGVR addresses core/v1 Secrets, which hold cluster credentials.
	SecretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)
