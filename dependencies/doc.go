// Package dependencies makes the ConfigMaps, Secrets, ServiceAccounts and
// PersistentVolumeClaims a workload refers to follow it to its clusters.
//
// The pure half: an [Extractor] per workload kind reads a federated template's references
// ([Builtin]: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod). [Union]
// gives each dependency the union of its workloads' [Clusters].
//
// The loop ([New], [Dependencies.Reconcile], [Dependencies.Run]) passes over one namespace
// at a time. It reads every workload with spec.propagateDependencies. A dependency nobody
// federated gets a Federated<Kind> the loop owns (label federation.k8s.io/generated-by:
// dependencies). Its template is the host object, its spec.placement.clusters the union.
// The loop deletes it when no workload needs it.
//
// A dependency the user federated keeps its own placement. The loop writes the union to its
// annotation federation.k8s.io/required-by-clusters; placement adds those clusters
// (placement's Decision.Require). A missing dependency that is not optional sets the
// workload's DependenciesResolved condition False, reason DependencyMissing, naming it.
//
// A workload's clusters are its status.schedule's, its evictions' and those status.clusters
// lists. So a dependency moves with a failover and leaves a cluster only after its workload.
// A workload being deleted keeps its dependencies in the clusters they are in, and adds none
// ([Dependency.Where]): a pass that still reads it never undoes a narrowing.
//
// Other workload kinds register an Extractor in Options.Extractors, keyed by target GVK.
// Run needs the CRD of every type it watches. Package controlplane gives it only the
// workload types the host serves. It reports the others in LoopStatus.Partial, and restarts
// the loop with a type once its CRD is installed.
package dependencies
