package federation

// DefaultNamespace is the control plane's own namespace on the host by default: the
// clusters' credentials, its Leases and DNS domains live there, and no propagation policy
// selects objects in it.
const DefaultNamespace = "fedkit-system"

// Well-known labels and annotations. Member objects created by fedkit carry [ManagedByLabel];
// loops never modify or delete a member object without it.
const (
	// ManagedByLabel marks member objects that the federation manages. Its value is
	// [ManagedByValue]. Objects without it are left alone: sync reports them as a conflict
	// instead of adopting them (unless the federated object asks for adoption).
	ManagedByLabel = "federation.k8s.io/managed-by"

	// ManagedByValue is the value of ManagedByLabel.
	ManagedByValue = "fedkit"

	// RevisionAnnotation on a member object records the federated object's revision that
	// rendered it; on the federated object's status it is syncedRevision.
	RevisionAnnotation = "federation.k8s.io/revision"

	// DesiredHashAnnotation holds a hash of the rendered desired state, so sync can skip an
	// update that would change nothing and can detect drift cheaply. Its value is
	// "<scheme>:<hex>" (package override documents the current scheme); compare values for
	// equality only. Values of different schemes say nothing about the objects: the scheme
	// changes whenever the hash of an unchanged object would.
	DesiredHashAnnotation = "federation.k8s.io/desired-hash"

	// ManagedLabelsAnnotation and ManagedAnnotationsAnnotation on a member object list, comma
	// separated and sorted, the label and annotation keys the federation set when it last
	// rendered the object (fedkit's own keys left out). Rendering keeps the keys that member
	// controllers add, and these lists tell such keys apart from keys the federation set
	// before and has since dropped from the template, which must go.
	ManagedLabelsAnnotation      = "federation.k8s.io/managed-labels"
	ManagedAnnotationsAnnotation = "federation.k8s.io/managed-annotations"

	// ManagedFinalizersAnnotation on a member object lists, comma separated and sorted, the
	// finalizers the template set when the federation last rendered the object (absent when
	// it set none). Rendering keeps the member's own finalizers, and drops those listed here
	// that the template no longer sets.
	ManagedFinalizersAnnotation = "federation.k8s.io/managed-finalizers"

	// OrphanAnnotation, set to "true" on a federated object, makes its deletion leave the
	// member objects in place, without the federation's labels and annotations, instead of
	// deleting them, as KubeFed's orphan annotation did. It applies to the deletion only: a
	// cluster that leaves the object's placement still has its member object deleted.
	OrphanAnnotation = "federation.k8s.io/orphan"

	// DeletionStartedAnnotation on a federated object being deleted records, in RFC 3339, when
	// sync first found it had to wait for member objects to go. sync's DeletionTimeout counts
	// from it, so a restart of the control plane does not start the wait again, and an outage
	// longer than the timeout does not cut it short.
	DeletionStartedAnnotation = "federation.k8s.io/deletion-started"

	// ClaimRemovalAnnotation on a FederatedPersistentVolumeClaim says what becomes of a
	// member claim when its cluster leaves the placement (its workload moved away: a drain,
	// a failover, a rebalance, a placement edit). By default ([ClaimRemovalRetain]) the claim
	// stays there, released (see [ReleasedAnnotation]): a claim's data is never collateral of
	// a move. [ClaimRemovalDelete] deletes it, as any other member object. Deleting the
	// FederatedPersistentVolumeClaim (or, for one the dependencies loop generated, the host
	// claim) deletes the claims it still places, whatever the annotation.
	ClaimRemovalAnnotation = "federation.k8s.io/claim-removal"

	// ReleasedAnnotation on a member object holds the uid of the federated object that
	// released it: an eviction with purge mode Never ended in that cluster, so sync orphaned
	// the copy there instead of deleting it. When the federated object is placed in that
	// cluster again, sync takes the copy back rather than treat it as another owner's.
	ReleasedAnnotation = "federation.k8s.io/released-from"

	// AdoptAnnotation, set to "true" on a federated object, lets sync take over member objects
	// of the same name that the federation did not create.
	AdoptAnnotation = "federation.k8s.io/adopt"

	// MigratedFromAnnotation on a federated object names the federation it was converted
	// from. Package migrate sets it to [MigratedFromKubeFed] on every Federated<Kind> it
	// converts. Sync then adopts the member objects KubeFed made for it, and only those:
	// objects labelled [KubeFedManagedLabel]: "true". So a cut-over from KubeFed deletes and
	// creates nothing.
	MigratedFromAnnotation = "federation.k8s.io/migrated-from"

	// MigratedFromKubeFed is MigratedFromAnnotation's value on objects converted from KubeFed.
	MigratedFromKubeFed = "kubefed"

	// KubeFedManagedLabel is the label KubeFed puts on the member objects it manages, with
	// the value "true". Sync removes it from an object it adopts for a migrated federated
	// object: KubeFed finds its member objects by it, so nothing KubeFed still does (the
	// deletion of its own federated object) reaches an object fedkit has taken over.
	KubeFedManagedLabel = "kubefed.io/managed"

	// FederatedNameLabel and FederatedNamespaceLabel on member objects point back to the
	// federated object, so status collection can find them by label.
	FederatedNameLabel      = "federation.k8s.io/federated-name"
	FederatedNamespaceLabel = "federation.k8s.io/federated-namespace"

	// SyncFinalizer is put on federated objects so member objects are cleaned up before the
	// federated object goes away.
	SyncFinalizer = "federation.k8s.io/sync"

	// RegionLabel and ZoneLabel are the standard topology labels. Cluster objects can carry
	// them instead of spec.region/spec.zones; nodes in member clusters carry them too.
	RegionLabel = "topology.kubernetes.io/region"
	ZoneLabel   = "topology.kubernetes.io/zone"

	// ProviderLabel names a cluster's cloud provider (aws, gcp, azure, ...), used by spread
	// constraints over "provider".
	ProviderLabel = "federation.k8s.io/provider"

	// TaintClusterNotReady is the taint the cluster monitor puts on a Cluster whose Ready
	// condition is not True; placement leaves such clusters out unless tolerated.
	TaintClusterNotReady = "federation.k8s.io/not-ready"

	// TaintClusterUnreachable is the taint the cluster monitor puts on a Cluster it cannot reach.
	TaintClusterUnreachable = "federation.k8s.io/unreachable"

	// TaintClusterUnschedulable is the NoSchedule taint `kubectl fed cordon` puts on a
	// Cluster and uncordon removes, as kubectl cordon marks a node: no new placements go
	// there, and what runs there stays.
	TaintClusterUnschedulable = "federation.k8s.io/unschedulable"

	// SecretClusterLabel on a Secret names the one Cluster that may use its credentials. A
	// Cluster whose spec.secretRef names a Secret without this label, or labelled for another
	// Cluster, gets no client: whoever may write Clusters cannot point one at another
	// cluster's Secret and an apiEndpoint of their own to receive its token. Whoever writes
	// the Secret (the one trusted with the credentials) decides which Cluster uses them.
	SecretClusterLabel = "federation.k8s.io/cluster"

	// AutoscalerAnnotation on a member HorizontalPodAutoscaler holds the uid of the
	// ReplicaSchedulingPreference whose Distributed autoscaling wrote it (package autoscale).
	// With [ManagedByLabel] it is the proof that the HPA is the autoscaler's: an HPA without
	// both is never changed or deleted.
	AutoscalerAnnotation = "federation.k8s.io/autoscaled-by"

	// GeneratedByLabel on a federated object names the loop that created it and owns it
	// ([GeneratedByDependencies], [GeneratedByPropagation]). Objects without it are the
	// user's.
	GeneratedByLabel = "federation.k8s.io/generated-by"

	// GeneratedByDependencies is GeneratedByLabel's value on the Federated<ConfigMap|Secret|
	// ServiceAccount|PersistentVolumeClaim> the dependencies loop creates for a workload's
	// dependency nobody federated.
	GeneratedByDependencies = "dependencies"

	// RequiredByClustersAnnotation on a federated object the user made lists, comma
	// separated and sorted, the clusters its dependent workloads run in. The dependencies
	// loop writes it; placement adds these clusters to the object's own ([RequiredClusters]).
	RequiredByClustersAnnotation = "federation.k8s.io/required-by-clusters"

	// RequiredByKindsAnnotation on a federated dependency (generated or the user's) lists,
	// comma separated and sorted, the Federated kinds of the workloads it follows. The
	// dependencies loop writes it, and never narrows nor deletes a dependency a kind it does
	// not run over required (a type disabled, or left out of the control plane's types): it
	// cannot see that kind's workloads, whose copies may still use it.
	RequiredByKindsAnnotation = "federation.k8s.io/required-by-kinds"

	// ReleaseClustersAnnotation on a federated object lists, comma separated and sorted, the
	// clusters where its member object is released rather than deleted when the object
	// leaves them (its placement no longer has them): sync removes the federation's labels
	// there, marks the copy [ReleasedAnnotation], and leaves it, as a claim's. The
	// dependencies loop writes it on a workload's dependencies ([ReleaseClusters]) for the
	// clusters where that workload's copies were orphaned (deleted with [OrphanAnnotation]):
	// the orphaned pods there still use them. It does not change what the object's own
	// deletion does.
	ReleaseClustersAnnotation = "federation.k8s.io/release-clusters"

	// DependenciesFinalizer is put by the dependencies loop on every workload with
	// spec.propagateDependencies, so the loop sees its deletion: when it is deleted with
	// [OrphanAnnotation], its dependencies are released where its copies were orphaned
	// ([ReleaseClustersAnnotation]) before the finalizer goes.
	DependenciesFinalizer = "federation.k8s.io/dependencies"

	// ControlPlaneVersionAnnotation on a coordination.k8s.io Lease of a control plane (its
	// leader election Lease, its shard and presence Leases) is the version of the program
	// whose replica wrote it last: the holder's, since each write sets it anew. Package
	// controlplane writes it when Options.Version is set; `kubectl fed version` reads it.
	ControlPlaneVersionAnnotation = "federation.k8s.io/controlplane-version"
)

// Values of [ClaimRemovalAnnotation], the words of a PersistentVolume's reclaim policy and of
// a StatefulSet's persistentVolumeClaimRetentionPolicy.
const (
	// ClaimRemovalRetain (the default): a claim stays in a cluster its workload left,
	// released from the federation.
	ClaimRemovalRetain = "Retain"
	// ClaimRemovalDelete: a claim is deleted from a cluster its workload left.
	ClaimRemovalDelete = "Delete"
)

// Condition types.
const (
	// ConditionReady on a Cluster: the API server answers; on a federated object: every
	// placed cluster reports its member object ready.
	ConditionReady = "Ready"
	// ConditionOffline on a Cluster: the cluster has not answered for a while.
	ConditionOffline = "Offline"
	// ConditionFailover on a Cluster: its failover stage (NoSchedule, NoExecute, Recovered),
	// written by the cluster monitor once the cluster has been not Ready.
	ConditionFailover = "Failover"
	// ConditionCredentialsExpiring on a Cluster: True when the credentials of its Secret
	// expire soon (within the cluster monitor's warning window) or have expired; False, with
	// the time they expire, otherwise. Absent when the client cannot tell when they expire.
	ConditionCredentialsExpiring = "CredentialsExpiring"
	// ConditionScheduled on a federated object: status.schedule reflects the current spec.
	ConditionScheduled = "Scheduled"
	// ConditionPropagated on a federated object: every placed cluster has the current revision.
	ConditionPropagated = "Propagated"
	// ConditionDependenciesResolved on a federated workload with spec.propagateDependencies:
	// every ConfigMap, Secret, ServiceAccount and PVC it references exists on the host (or
	// is federated), so it follows the workload.
	ConditionDependenciesResolved = "DependenciesResolved"
)
