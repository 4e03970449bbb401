// Package federation is fedkit's API and shared vocabulary.
//
//	obj, err := federation.FederatedObjectFromUnstructured(u) // as informers hand it out
//	federation.DefaultFederatedObject(obj)
//	if errs := federation.ValidateFederatedObject(obj); len(errs) > 0 {
//		return federation.Terminal(federation.NewInvalidError("FederatedDeployment", key, errs)) // names each field
//	}
//
// Every other fedkit package imports it, and it imports nothing else from fedkit. So an
// embedder can depend on it alone, to write an admission webhook, say, or a CLI that creates
// federated objects.
//
// # The objects
//
// A federated object says what a member object looks like, where it goes and how it differs
// per cluster. One Go type, [FederatedObject], serves every Federated<Kind>:
// FederatedDeployment, FederatedService, a federated custom resource. Its kind is
// "Federated" + the target kind, its group types.federation.k8s.io/v1alpha1.
//
//	apiVersion: types.federation.k8s.io/v1alpha1
//	kind: FederatedDeployment
//	metadata: {name: app-frontend, namespace: production}
//	spec:
//	  template: {spec: {replicas: 6, template: {...}}}   # the Deployment, minus name/namespace
//	  placement:
//	    clusters: [{name: cluster-aws-us-east}, {name: cluster-gcp-eu-west}]
//	  overrides:
//	  - clusterName: cluster-gcp-eu-west
//	    clusterOverrides:
//	    - {op: replace, path: /spec/replicas, value: 4}
//
// The template is a [RawObject]: free-form JSON held decoded, exactly as
// unstructured.Unstructured holds it, because the target type can be anything, CRDs
// included. Override values are [RawValue]s, kept as encoded JSON until rendering decodes
// them. [Placement] keeps KubeFed's rule: clusters, when present even empty, wins over
// clusterSelector. It adds exclusions, region and zone affinity, tolerations, maxClusters
// and spread constraints.
//
// A [Cluster] (cluster-scoped, core.federation.k8s.io) is a member. It holds its endpoint,
// credentials (a Secret named by spec.secretRef), region, zones and taints. Its status is
// what the cluster monitor keeps: Ready, version, capacity and available resources,
// heartbeat. A [ReplicaSchedulingPreference] has the same namespace and name as the object
// it schedules. It divides a total number of replicas by weight, with per-cluster minimums
// and maximums. A [PropagationPolicy] (namespaced) or a [ClusterPropagationPolicy] selects
// native host objects by kind, name and labels. Package propagation writes a Federated<Kind>
// for each.
//
// The loops write the federated object's status, each its own fields:
//
//   - [Schedule], by the scheduler;
//   - [MemberStatus] per cluster: sync's propagation and revision, the collector's observed
//     fields;
//   - [AggregatedStatus], by the collector;
//   - the conditions Scheduled, Propagated and Ready.
//
// # From bytes to a decision: defaults, validation, conversion
//
// Loops see objects as unstructured, since that is what informers and the dynamic client
// hand out. They convert them when they need typed access:
//
//  1. Convert: [FederatedObjectFromUnstructured], [ClusterFromUnstructured] and
//     [ReplicaSchedulingPreferenceFromUnstructured]; [ToUnstructured] goes back. A field of
//     the wrong JSON type is an error wrapping [ErrInvalidObject].
//  2. Default: [DefaultFederatedObject] and [DefaultReplicaSchedulingPreference] fill in
//     what the specification defaults (override op "replace", minReplicas 1,
//     rebalancePeriod 5m, revisionHistoryLimit 10), in place. Defaulting comes before
//     validation, so validation sees what the loops will act on. [EffectiveFailover] picks
//     the failover settings that apply (the placement's, else the preference's), defaulted.
//  3. Validate: [ValidateFederatedObject], [ValidatePlacement], [ValidateOverrides],
//     [ValidateReplicaSchedulingPreference] and [ValidateCluster] return a field.ErrorList
//     whose paths name the exact field (spec.overrides[1].clusterOverrides[0].path), the
//     shape an admission webhook returns. [NewInvalidError] turns a list into an error that
//     satisfies errors.Is(err, ErrInvalidObject). Loops wrap it with [Terminal], because
//     retrying bad input cannot help: it waits for the object to change.
//     [ValidateMember] checks a rendered workload (Deployment, StatefulSet, DaemonSet,
//     ReplicaSet, Job) by the rules its member API server refuses every create for.
//     [UnknownFields] lists the fields of an object of any built-in kind that its Go type
//     does not have, which a member's API server drops with a warning.
//
// # Types of federation
//
// A [TypeConfig] links a target type (apps/v1 Deployment) to its federated type
// (FederatedDeployment). It says whether replicas are divided among clusters (ReplicasPath)
// or the object is copied whole. Every loop is built for one TypeConfig. Ready-made ones
// cover the common built-ins ([DeploymentType], [ServiceType], ...; [BuiltinTypes] lists
// them). [NewTypeConfig] federates any other type. TypeConfig.Rules holds a kind's
// declarative rules ([KindRules]: readiness, counts, status values, dependencies and
// retained fields, in CEL; package kinds compiles them). A [FederatedTypeConfig] on the host
// is a TypeConfig as an object (`kubectl fed enable` writes it; a control plane with
// TypeConfigs runs its loops), and [CRDWithTemplateSchema] is its Federated<Kind> CRD with the
// target's schema under spec.template.
//
// [CRDFor] returns the CustomResourceDefinition of a federated type, and [CRDs] the whole set
// to install on a host. [AddToScheme] and [AddFederatedKind] register the Go types with a
// runtime.Scheme. `kubectl get` shows each object's conditions, ready/desired replicas,
// synced revision and the reason of the first condition not True. Built-in types have
// KubeFed's short names (fdeploy, fsvc, fcm, fns...).
//
// # Reaching clusters
//
// [ClusterClient] reaches one Kubernetes API, a member or the host where federated objects
// live. It uses unstructured objects addressed by GroupVersionResource. Its errors are
// k8s.io/apimachinery/pkg/api/errors values, so apierrors.IsConflict and friends work.
// [ClusterSet] hands out a member's client by Cluster name.
//
// More capabilities are optional interfaces, detected by type assertion so the core
// interfaces need not grow:
//
//   - [HealthChecker] (/readyz);
//   - [VersionGetter];
//   - [ResourceDiscoverer]: what the API server serves;
//   - [CredentialsExpiryGetter]: when the client's credentials expire;
//   - [MemberCache]: shared informer caches of the member objects the federation manages,
//     with change notifications. [ReadOnlyMemberChanges] notifies without copying the
//     object. [WatchMemberChanges] takes the cheapest a set offers. [MemberCacheHealth] says
//     whether a cache is still in contact with its cluster.
//
// Package federation/kube implements them all on client-go; package fake implements them in
// memory.
//
// # Loop vocabulary
//
// A loop's Reconcile takes a [Key] (namespace/name; [ParseKey] reads one). It returns a
// [Result] whose RequeueAfter asks to come back later. An error wrapped with [Terminal]
// stops the retries for that key until something changes ([IsTerminal] tests it). Any other
// error is retried with backoff. Errors about one member cluster are [ClusterError]s, so
// callers can group failures by cluster with errors.As.
//
// A [Shard] splits the keys between processes. Every loop's Options.Shard restricts its Run
// to the keys [Shard.Owns], by [ShardOf]: a hash of the key that never changes between
// versions. The cluster monitor splits Clusters by name the same way. Package internal/loop
// explains the filter.
//
// # Errors
//
// The sentinels are matched with errors.Is through any amount of wrapping:
// [ErrClusterNotFound], [ErrClusterNotReady], [ErrUnreachable], [ErrInvalidObject],
// [ErrUnknownType], [ErrInvalidKey], [ErrInvalidShard], [ErrTerminal]. Every fedkit package
// wraps them with context naming the object, the field and the cluster.
//
// # Labels and annotations
//
// Member objects the federation created carry [ManagedByLabel]. No loop ever modifies or
// deletes a member object without it. [FederatedNameLabel] and [FederatedNamespaceLabel]
// point back to the federated object. [RevisionAnnotation] records the revision that
// rendered it, and [DesiredHashAnnotation] the hash of what was rendered.
//
// On a federated object:
//
//   - [OrphanAnnotation] keeps members on deletion (only then);
//   - [DeletionStartedAnnotation] records when sync began waiting for them to go;
//   - [AdoptAnnotation] lets sync take over existing objects;
//   - [RolloutPausedAnnotation] holds a staged rollout ([Rollout]) at its next gate.
//
// [SyncFinalizer] holds a federated object until its members are cleaned up. Package sync
// explains revisions, orphaning, adoption and staged rollouts.
//
// +kubebuilder:object:generate=true
// +groupName=core.federation.k8s.io
// +versionName=v1alpha1
package federation
