// Package dependencies makes the ConfigMaps, Secrets, ServiceAccounts and
// PersistentVolumeClaims a workload refers to follow it to its clusters.
//
//	d, err := dependencies.New(host, federation.BuiltinTypes(), dependencies.Options{})
//	res, err := d.Reconcile(ctx, federation.Key{Namespace: "shop"}) // one namespace
//	// or: err = d.Run(ctx)
//
// The pure half: an [Extractor] per workload kind reads a federated template's references
// ([Builtin]: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod).
// [WorkloadOf] reads a workload as the union needs it, and [Union] gives each dependency the
// clusters whose pods refer to it. [Decide] turns them into the loop's writes. Package
// preview calls WorkloadOf and Union.
//
// # Read, decide, act, report
//
// A pass over a namespace reads its workloads and its federated dependencies. It hands them
// to [Decide], the pure decision. Decide may first ask for more (Decision.Reads): the
// Clusters, for overrides and a user's dependency, and the host objects the workloads refer
// to. The pass reads those and calls again. The [Decision] holds every write: the finalizer
// on new workloads, the federated dependencies to create, update or delete, the finalizers
// that go, and each workload's condition. The pass carries them out in that order. The
// dependencies' writes wait until every new workload holds the finalizer. An orphaned
// workload keeps its finalizer until every write succeeded: only then are its releases
// recorded. Then the pass reports: events, the requeue. Decide reads no clock and no client
// ([Input] has Now), so a test calls it with objects in hand.
//
// The loop ([New], [Dependencies.Reconcile], [Dependencies.Run]) passes over one namespace
// at a time. It reads every workload with spec.propagateDependencies. A dependency nobody
// federated gets a Federated<Kind> the loop owns (label federation.k8s.io/generated-by:
// dependencies). Its template is the host object, its spec.placement.clusters the union. It
// tolerates every taint, so it follows its workloads wherever they run. The loop deletes it
// when no workload needs it (but see the claims and orphaned workloads below). It deletes
// only the version it read (uid and resourceVersion preconditions): a cache that lags never
// deletes one that has since recorded where its copies are released.
//
// A dependency the user federated keeps its own placement. The loop writes the union to its
// annotation federation.k8s.io/required-by-clusters; placement adds those clusters
// (placement's Decision.Require).
//
// What the loop cannot see, it does not remove. Every federated dependency it follows
// records the kinds of the workloads that required it (annotation
// federation.k8s.io/required-by-kinds). A kind the loop does not run over (a type whose
// FederatedTypeConfig was deleted, or that was left out of the control plane's types) may
// still have copies using it: such a dependency is neither narrowed nor deleted while its host
// object exists ([Decision.Kept], logged), and goes when the host object does.
//
// Every delete of a generated object goes through Options.Gate (package gate, with
// [Write.GateWrite]'s evidence); a refusal is a Warning (RefusedByGate) on the object, and
// the pass comes back after gate.RecheckAfter.
//
// # The rules
//
// Each one below is a promise the workload's DependenciesResolved condition keeps. When one is
// broken the condition is False; the first problem gives the reason, and the message names
// every dependency, and every cluster where that matters. A Warning event marks the change.
//
// What the pods refer to, after overrides. A workload with overrides is rendered for each of
// its clusters, as sync renders it (package override). Each dependency goes to the clusters
// whose pods refer to it. An override that points eu's pods at creds-eu sends creds-eu to eu,
// and keeps the template's creds-us out of eu. A dependency that is missing on the host, and
// not optional, is [ReasonDependencyMissing]; the workload still propagates without it.
//
// Credentials never travel. A Secret that federation.Credentials refuses is never federated
// for a workload: a member's credentials (label federation.k8s.io/cluster), a service-account
// token, and any Secret in Options.ControlPlaneNamespace. Package propagation refuses them
// with the same test. The workload says [ReasonDependencyRefused], naming the Secret and why. A
// FederatedSecret the user made of one gets no required-by-clusters annotation.
//
// Nothing of the system travels. A workload in kube-system, kube-public or kube-node-lease
// (federation.SystemNamespace), or in Options.ControlPlaneNamespace, federates nothing it
// refers to: no policy selects there either (package propagation applies the same
// federation.ReservedNamespace). The workload says [ReasonNamespaceRefused], naming the
// namespace and the rule. The loop writes nothing else in such a namespace.
//
// An explicit exclusion wins. A dependency the user federated is never sent to a cluster its
// own placement excludes: excludeClusters, clusterAffinity.required, or a taint it does not
// tolerate. A workload's need adds only clusters the placement merely does not list or
// select. The workload says [ReasonDependencyNotPlaceable], naming the dependency, the cluster
// and the rule ([placement.Refused]).
//
// A dependency leaves a cluster only after its workload's copy there is gone. A workload's
// clusters are its status.schedule's, its evictions' and those status.clusters lists ([Clusters]).
// Sync lists a cluster until its copy there is NotFound, also while finalizers hold it (sync's
// Foreground deletion, a member controller's cleanup). So a dependency moves with a failover
// and stays while the old copy drains. A workload being deleted keeps its dependencies in the
// clusters they are in, and adds none ([Dependency.Where]).
//
// An orphaned workload keeps its dependencies. A workload deleted with
// federation.OrphanAnnotation leaves its member copies running, no longer managed: package
// propagation deletes its generated object so when no policy selects the native object any
// more. The loop holds every workload whose dependencies follow it with
// federation.DependenciesFinalizer, so it sees that deletion. Before it lets the workload go,
// it lists the workload's clusters in each dependency's federation.ReleaseClustersAnnotation.
// When the dependency later leaves such a cluster, sync releases its copy there rather than
// delete it, as a claim's. So the orphaned pods keep their ConfigMaps and Secrets. The list
// stays: fedkit cannot see how long an orphaned copy runs. A shared dependency stays managed
// where another workload still needs it; when that one moves away, the copy is released, not
// deleted. A generated dependency that releases somewhere stays, placed nowhere, while its
// host object exists, so a workload that returns takes its copies back. An explicit removal
// releases nothing: a policy's spec.removal Delete, the native object deleted, or the
// Federated<Kind> deleted without the orphan annotation. Deleting the dependency's host
// object (or the user's own Federated<Kind> of it) deletes the copies it still manages. Like
// sync's, the finalizer holds a deletion until the loop runs: an embedder that stops running
// the loop for good removes federation.DependenciesFinalizer from the workloads.
//
// A PersistentVolumeClaim is never collateral of a move. A drain, a failover, a rebalance or a
// placement edit never deletes a claim from a member. Sync releases the claim there instead:
// it stays, without the federation's labels, and is taken back, data and all, if the workload
// returns. A generated FederatedPersistentVolumeClaim that no workload needs stays, placed
// nowhere, while the host claim exists. A claim leaves a member only when the user deletes the
// host claim (or their own FederatedPersistentVolumeClaim), or sets
// federation.ClaimRemovalAnnotation: Delete on the FederatedPersistentVolumeClaim.
//
// # Compared with Karmada's propagateDeps
//
// Karmada sends a dependency to the clusters its workloads are scheduled to. The rules above
// differ from it where Karmada would lose data or leak credentials:
//
//   - Karmada reads a workload's dependencies from its resource template; fedkit reads each
//     cluster's render, after overrides.
//   - Karmada ignores a dependency's own policy for the clusters a workload needs it in;
//     fedkit lets an explicit exclusion win and says so.
//   - Karmada propagates any Secret a pod refers to; fedkit refuses credentials.
//   - Karmada takes a dependency out of a cluster as soon as the workload's schedule leaves
//     it; fedkit waits until the workload's copy there is gone.
//   - Karmada deletes a claim from a cluster its workload left; fedkit releases it.
//   - Karmada skips a missing dependency silently; fedkit says so in a condition.
//   - Karmada's workloads stay managed when their policy goes (their binding lives on);
//     fedkit orphans them, and releases their dependencies with them.
//
// Other kinds declare their dependencies as rules in their type configuration
// (federation.KindRules.Dependencies: CEL over the template, each naming objects of one
// kind), read by [RulesExtractor]; [ExtractorFor] is the loop's choice, which preview makes
// too. Go code (Options.Extractors) still wins for a kind that has both. One thing Karmada
// does that fedkit does not: Karmada's OverridePolicies apply to dependencies too; a generated dependency here is the
// host object as it is, so federate the object yourself to override it per cluster.
//
// # Other kinds
//
// Other workload kinds register an Extractor in Options.Extractors, keyed by target GVK. It
// is given the template, and each cluster's render (the whole member object) when the
// workload has overrides. Run needs the CRD of every type it watches. Package controlplane
// gives it only the workload types the host serves. It reports the others in
// LoopStatus.Partial, and restarts the loop with a type once its CRD is installed.
package dependencies
