// Package federation is fedkit's API and shared vocabulary: the Federated<Kind>, Cluster and
// ReplicaSchedulingPreference types with their deep copies, scheme registration, defaults,
// validation and CRDs; the TypeConfig that links a target type to its federated type; and the
// interfaces every loop is written against, [ClusterClient] and [ClusterSet].
//
// It imports nothing else from fedkit, so embedders can depend on it alone.
//
// +kubebuilder:object:generate=true
// +groupName=core.federation.k8s.io
// +versionName=v1alpha1
package federation
