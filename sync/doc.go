// Package sync is the push loop: the [Syncer] renders each federated object for its clusters
// and makes the member objects match.
//
//	import fedsync "github.com/fedkit/fedkit/sync" // it shadows the standard library's sync
//
//	s, err := fedsync.New(host, clusters, federation.DeploymentType, fedsync.Options{})
//	res, err := s.Reconcile(ctx, federation.Key{Namespace: "production", Name: "web"})
//	// or: err = s.Run(ctx) // watches the host and the members and reconciles on its own
//
// It is idempotent. It never loses an update, never fights forever, and never touches what it
// does not own.
//
// # Two halves
//
// Sync is a driver of a pure decision, as etcd-io/raft's node drives its RawNode. Package
// sync/plan decides: [plan.Decide] takes the federated object, the Clusters, the
// member objects read, the revision history and what the Syncer remembers of the member
// objects (plan.Input.Memory), and returns a [plan.Decision] of plain data; [plan.Report]
// turns what the driver did ([plan.Outcome]) into the status, the events and the requeue.
// Package preview calls the same functions. This package reads, calls them, carries the
// decision out and writes the report: reconcile.go (the pass: read, decide, act, report),
// reads.go (the member objects), execute.go (the writes, and send, the one function that
// writes to a member), delete.go, namespace.go, revision.go (the history), rollback.go,
// rollout_pass.go, wait.go, status.go, events.go, memory.go (what the Syncer remembers of a
// federated object: one record, one lock, one forget), cluster.go, run.go, writers.go,
// limiter.go, metrics.go, triggers.go.
//
// Options.Cache is the process's shared host cache ([package hostcache]); nil gives Run its own.
//
// # One pass
//
// [Syncer.Reconcile] reads the federated object, decides, acts and reports, in that order.
// The decision is [plan.Decide]. Embedders and previews can call it with the same inputs to
// see exactly what sync would do:
//
//  1. Where and how many: [plan.TargetsFor] takes the scheduler's status.schedule when it was
//     written for the object's current generation. Else it evaluates spec.placement and
//     keeps the template's replica count. It waits for the scheduler in the cases of
//     "Waiting for the scheduler" below.
//  2. What: override.RenderMembers renders the member object per cluster: template, the
//     fields the member owns (retained from what exists), the scheduled replicas, the
//     cluster's overrides, fedkit's labels and annotations. Labels, annotations and
//     finalizers the template set and no longer sets are removed from the member; those
//     member controllers added stay.
//  3. Per cluster: placed and absent, create; placed and present, update when the
//     desired-state hash differs or an owned field drifted; not placed (or the federated
//     object is being deleted), delete what the federation manages there.
//
// # Waiting for the scheduler
//
// A scheduler.Scheduler writes status.schedule and the Scheduled condition with the
// generation it observed. Sync and the scheduler watch the same objects, so on a new one
// either may pass first. Without a schedule, sync has only spec.placement and the template's
// replica count. A FederatedDeployment of 6 replicas that a ReplicaSchedulingPreference
// divides 3/3/3 would run 6 in each cluster, 18 in all, until the schedule comes. The
// template's count would also stay everywhere while the preference is invalid.
//
// When a scheduler runs for the type, set Options.WaitForScheduler (package controlplane
// does). A pass then propagates nothing, writes nothing to the members and deletes nothing
// there, as long as
//
//   - the Scheduled condition has not observed the object's current generation (the
//     Propagated condition of an object not propagated yet says ReasonWaitingForSchedule;
//     the scheduler's write brings the object back), or
//   - it has, but there is no status.schedule: the scheduler refused the object, its
//     placement or its preference, and had no earlier schedule to keep. Propagated says
//     ReasonNotScheduled with the scheduler's reason and message (and a NotScheduled
//     warning event); member objects that run already stay as they are.
//
// [plan.Decide] decides the same with plan.Input.WaitForScheduler (Decision.Wait says why).
// Deletion never waits. Without the option, a new object goes out by spec.placement with the
// template's count; this is for embedders who run sync without a scheduler. Two waits hold
// even without the option. Once a scheduler has scheduled an older generation, sync waits
// for it to catch up with a new one. And while a cluster the schedule left out as not ready
// is Ready again, sync waits for the scheduler to place it rather than delete what runs there.
// A schedule may also predate a change of a Cluster: sync creates nothing in a scheduled cluster
// that the object's placement refuses now (placement.Refused: a NoExecute taint it does not
// tolerate, clusterAffinity.required), and says plan.ReasonPlacementRefused there until the
// scheduler has decided again. A copy already there follows the schedule: the scheduler takes
// it away, gracefully.
//
// # Owned fields, drift and no thrash
//
// The federation owns the fields its render sets and nothing else. The API server defaults
// others (a Deployment's strategy). Member controllers add annotations and labels. An
// autoscaler may own the replica count (spec.retainReplicas), and status is the member's.
// So an update happens only when the desired state changed, or when a field the render sets
// has another value in the member: last write wins, the federation's. The desired state
// changed when its hash, in federation.DesiredHashAnnotation, differs.
//
// To make that cheap, sync remembers the member object's resourceVersion after each write or
// check. An object that has not changed since is not compared at all. One that changed is
// compared field by field once. A member controller that only adds its own annotations
// causes no write. [plan.OwnedDiff] is that comparison with every differing field and both
// values, for previews and reviews.
//
// Fields are compared as the member's server stores a built-in object, which the Go type
// tells:
//
//   - a quantity by value (cpu: 1 is stored as "1", 0.5 as "500m");
//   - an empty value the type drops, as absent;
//   - a list that strategic merge patch merges by a key, element by element by key
//     (containers by name, ports by containerPort, env and volumes by name).
//
// So a sidecar a webhook adds is left alone, and a hand-edited image or cpu request is put
// back. A new Syncer over members that run the desired objects writes nothing. A real server
// prunes a field the type does not have (a typo); it is not drift while the member lacks it.
// Other fields a member's server did not keep are remembered after each write.
//
// # Optimistic locking
//
// Every update carries the resourceVersion it read. Every delete carries the uid and
// resourceVersion as preconditions. On a Conflict sync reads the member object again and
// renders again with it, so a concurrent writer's fields that the federation does not own
// are kept. It retries Options.ConflictRetries times; then the pass fails and the key is
// retried with backoff.
//
// The federated object's own status is written the same way: sync's fields replace only
// sync's fields of the object as read. With Options.StatusWriter (the control plane's shared
// writer) sync hands its fields to it instead. It then reads objects with the changes still
// pending, so one write holds the scheduler's, sync's and the collector's.
//
// # Ownership
//
// A member object is the federation's when it carries federation.ManagedByLabel with the
// Syncer's Options.Identity. Sync never modifies or deletes any other object. If an object of
// the same name exists and no federation manages it, the cluster reports
// [plan.ReasonAlreadyExists] (the default [ConflictAbort]), unless adoption is allowed:
// [ConflictAdopt], or federation.AdoptAnnotation on the federated object. An object of
// another federation (another identity) reports [plan.ReasonManagedByOther] and is never taken.
//
// An object migrated from KubeFed (federation.MigratedFromAnnotation: "kubefed", which
// package migrate writes) adopts the member objects KubeFed made: those labelled
// federation.KubeFedManagedLabel: "true", and nothing broader. It updates them in place, so
// a cut-over from KubeFed deletes and creates nothing. Sync removes KubeFed's label from
// every object it adopts: KubeFed finds its member objects by that label, so the deletion
// of KubeFed's own federated object afterwards cannot reach them.
//
// # Namespaces
//
// A real API server refuses an object whose namespace does not exist. Sync creates a missing
// member namespace, labelled as the federation's and annotated with
// [plan.CreatedNamespaceAnnotation], unless a FederatedNamespace governs it. With a
// FederatedNamespace the object waits for it ([plan.ReasonWaitingForNamespace]). In a cluster the
// FederatedNamespace does not place the namespace in, it says it will not come
// ([plan.ReasonNamespaceNotPlaced]). Run passes over a waiting object again as soon as its
// namespace appears.
//
// When the last object sync put there goes, sync deletes a namespace it created only if
// nothing else lives in it. It lists every namespaced, listable resource the member serves
// (federation.ResourceDiscoverer). It may find only what the federation is removing: the
// deleted object, managed objects being deleted, and what they own. What every namespace
// holds, and Events, do not count ([plan.Occupant] decides, [plan.CreatedNamespace] says
// which namespaces are sync's). When it cannot look everywhere (no discovery, a failed List),
// it keeps the namespace and logs why. Options.KeepCreatedNamespaces keeps them all.
//
// A FederatedNamespace must be named as its namespace. Its deletion never deletes a namespace
// sync created for other objects: that one is left alone. Nor does it delete a system
// namespace, or the host's own namespace when the host is also a member (the same uid).
// Those two are orphaned with a warning ([plan.ReasonSystemNamespace], [plan.ReasonHostNamespace]).
// A FederatedNamespace leaving a cluster keeps the member namespace while objects the
// federation placed live in it ([plan.ReasonNamespaceInUse]). When sync cannot check that, or
// whether the namespace is the host's own, it keeps the namespace, reports
// [plan.ReasonNamespaceCheckFailed] and retries with backoff.
//
// # Revisions and rollback
//
// Every change of template, overrides, placement or retainReplicas gets the next revision
// number, in federation.RevisionAnnotation. The number is on the federated object and on the member objects it renders, in status.clusters[].revision per
// cluster, and in status.syncedRevision once every placed, reachable cluster runs it. The
// collector reads a member's annotation back as status.clusters[].observedRevision.
//
// The last spec.revisionHistoryLimit snapshots (default 10) are kept on the host. They are
// apps/v1 ControllerRevisions owned by the federated object and labelled with its uid
// ([OwnerUIDLabel]). [Rollback] writes what ran in an old snapshot back into the spec:
// template, overrides, retainReplicas. The placement and the template's replica count stay
// as they are, unless [Rollback] is given [RestorePlacement]. Sync then propagates it as a
// new revision, as a Deployment rollback does.
//
// A federated object generated from a native host object (a propagation policy's) would be
// rewritten from that object at once. [Rollback] restores the revision's template into the
// native object instead, which the policy federates again. A revision whose overrides (or,
// with RestorePlacement, placement) differ is refused with [ErrGenerated], naming the policy:
// those are the policy's to change.
//
// A revision number alone never rewrites a member. A new revision that renders the same
// object leaves it as it is: a placement change, for the clusters that stay. During a staged
// rollout (below) it updates the revision annotation.
//
// The history heals itself:
//
//   - Run watches it. A current ControllerRevision deleted by hand is recorded again by the
//     next pass, under its name and number. A Syncer that is not Run records it again
//     after a restart, under the next number.
//   - A ControllerRevision with the current snapshot's name that belongs to an earlier object
//     of the same name (another uid in OwnerUIDLabel) is replaced. That includes one whose
//     ownerReferences the garbage collector removed after an orphaning deletion.
//   - A name hashes the federated group and kind with the snapshot, so two kinds never share
//     a ControllerRevision. History that earlier versions named by the snapshot alone is
//     still found; the current entry is recorded again under its new name, number unchanged.
//
// The host may refuse a history write (RBAC, a quota, an admission webhook). Then nothing is
// propagated. Propagated=False says [plan.ReasonHistoryWriteFailed], naming the write (create,
// update or delete ControllerRevision namespace/name) and the host's error. A Warning event
// says the same, and the pass is retried with backoff.
//
// # Staged rollouts and automatic rollback
//
// With spec.rollout, a new revision goes through the placed clusters stage by stage instead of everywhere at once. A
// new revision here is a change of template, overrides or retainReplicas. The stages say the
// order: a canary, then a region, then a percentage. [plan.RolloutStages] lays them over the
// placed clusters; those no stage selects come last.
//
// The clusters of the stages that have not started keep the stable revision, the last one
// that completed. Sync renders them from its snapshot in the history ([plan.Decision].Previous).
// It uses the current placement, schedule, overrides' retention and labels, so where an
// object goes and with how many replicas is never held back.
//
// A stage's gate opens when every one of its clusters reports the new revision ready, with
// fresh data, for the stage's minReadySeconds. Fresh data is defined once, in [package
// status]. Sync reads the collector's fields of status.clusters[]: ready, observedRevision
// and stale. So the two loops meet in the status, as they do for replicas. During a rollout
// a member that renders as before still gets the new revision annotation (one update). That
// is what the collector reports as its observedRevision. federation.RolloutPausedAnnotation
// holds the next stage (the first included) until it is removed.
//
// A rollout gates what runs, nothing else. A new revision that changes only the placement
// or replica counts (the template's, or the schedule) is not staged. The rollout goes on at
// its stage, and clusters on the new revision keep it. A cluster that joins gets what its
// stage runs. Replica counts apply everywhere at once. A cluster that leaves the placement
// leaves the rollout: it never holds a stage.
//
// A revision fails when a stage is not ready within its progressDeadlineSeconds. It also
// fails when a cluster that had reported it ready stays not ready that long, with fresh
// data. Stale data never advances nor fails a stage: the member could not be read, or its
// Cluster is not Ready. It pauses the stage's clocks, which resume, never restart, when the
// data is fresh (status.rollout.deadlinePausedSince). So a flapping cluster fails once its
// fresh data said not ready for the deadline in total. A cluster that was not ready before
// its data went stale still counts as not ready since then. With fresh data from no more
// than half of the placed clusters nothing moves (the quorum rule of [package status]).
//
// A cluster sync cannot propagate to holds its stage the same way: AlreadyExists, a refused
// write, a missing namespace. status.rollout names it with the reason
// (RolloutReasonNotPropagated). That is not the revision's health, so it never fails it nor
// rolls it back.
//
// With spec.rollout.autoRollback, a failed revision's stable revision is restored through
// [Rollback]'s path. The spec is written back, so it becomes a new revision, which goes
// everywhere at once. A generated object (a propagation policy's) is also marked
// federation.RolledBackAnnotation: the propagation loop restores the template into the native
// object the policy renders it from, so the rollback is not undone by the next rendering. It changes nothing but the clusters that ran the failed one, and the
// placement stays the user's. A RolledBack event and condition name the revision, the
// clusters and the reason. Without autoRollback the rollout stops where it is and
// status.rollout says so. A failed revision is never retried: only a new spec of what runs
// starts a new rollout.
//
// [plan.DecideRollout] is the whole decision as a pure function. status.rollout records where the
// rollout stands: stage, start and ready times, which clusters run which revision, why it
// waits. Without spec.rollout none of this happens: every revision goes to every placed
// cluster at once.
//
// # Deletion
//
// The Syncer puts federation.SyncFinalizer on every federated object. When one is deleted,
// its member objects are deleted from every cluster with propagationPolicy Background
// (Options.DeletionPropagation: Foreground). A kind's own default is never used: a deleted
// Job never orphans its Pods.
//
// With federation.OrphanAnnotation: "true" the
// member objects are left in place instead, without the federation's labels and annotations.
// The annotation applies to the deletion only. A cluster that leaves the placement has its
// member object deleted, as in KubeFed. Set the annotation before the deletion: a delete
// already under way when it arrives is not called back. A Cluster that leaves the federation
// orphans by default (below).
//
// A PersistentVolumeClaim is the exception: its data is never collateral of a move (a drain,
// a failover, a rebalance, a placement edit). A claim whose cluster leaves the placement is
// released, as an eviction with purge mode Never releases a copy (below), and taken back if
// the object is placed there again. Deleting the FederatedPersistentVolumeClaim deletes its
// claims; federation.ClaimRemovalAnnotation: Delete on it deletes them on a move too. Any
// object's copy in a cluster its federation.ReleaseClustersAnnotation lists is released the
// same way when the object leaves that cluster (the dependencies loop lists where orphaned
// pods use a dependency); the object's deletion still deletes it.
//
// A delete because a cluster left the placement needs proof. Right before it, sync reads
// the federated object and that Cluster from the host's API server. If either changed in a
// way that matters (spec, annotations, schedule, deletion; the Cluster's labels, taints or
// deletion: [plan.SameDeletions], [plan.SamePlacement]), nothing is deleted. The pass fails
// with a Conflict and the key is decided again on the new version. So a cache that lags never deletes a copy that the user meanwhile
// orphaned, or that the cluster, back from a drain, should keep.
//
// A member object deleted because its cluster left the placement is read again right after.
// While its finalizers hold it, status.clusters lists the cluster, [plan.ReasonWaitingForRemoval],
// until it is NotFound: what runs there, and what depends on it, is still there.
//
// The finalizer goes once every member object is gone (NotFound), not when its delete was
// sent. A member object that its own finalizers hold (foregroundDeletion, a member
// controller's) holds it too ([plan.ReasonWaitingForRemoval]). So does a cluster that is not
// ready or cannot be reached, unless sync shows it holds no copy. Sync writes only to Ready
// clusters, so a cluster not Ready since before the object was made (by more than a minute)
// never got one. Otherwise its member cache, which keeps what the cluster last held, or a
// live read, must find no copy; when neither can answer, the cluster holds the deletion.
// [plan.Decide] names the clusters to check and how (Decision.NotReady); the driver reads.
// Options.DeletionTimeout bounds the wait (default 10 minutes).
// It counts from sync's first pass that had to wait, which
// federation.DeletionStartedAnnotation records. So a restart does not start it again, and an
// outage longer than the timeout still leaves the clusters the whole of it. After that the
// finalizer is removed anyway. A MembersLeftBehind event and the log report what may have
// been left behind.
//
// # The gate
//
// Every member delete, orphaning and adoption, a Secret's create or update, the release of a
// namespace sync created and the pruning of its ControllerRevisions go through
// Options.Gate (package gate), with the evidence plan.Decide decided them on
// (plan.GateWrite). A write the gate refuses is not sent: the cluster's entry says
// RefusedByGate, naming the object and the invariant, as does the Propagated condition and
// a Warning event, and the object is looked at again after gate.RecheckAfter. A workload's
// last running copy, for one, stays until status.clusters says a replacement is available.
//
// # Evictions
//
// The scheduler's evictions need nothing of sync: the schedule lists what a losing cluster
// keeps. The scheduler holds an eviction of a cluster sync cannot act in (its entry says
// ClusterNotReady or ClusterUnreachable) until the cluster is back. A cluster evicted of all
// its replicas that is not Ready is no longer placed: it leaves the rollout
// (Targets.Unplaced), though its copy stays. Sync reads an eviction by its state
// (federation.Eviction.State). One exception to the above: an eviction with purge mode Never
// that ended is Released. Sync then orphans that copy (removes fedkit's labels and
// annotations) instead of deleting it, and marks it with federation.ReleasedAnnotation. If
// the object is placed there again, sync takes that copy back instead of reporting
// AlreadyExists.
//
// # Clusters leaving the federation
//
// Before the first object of its type goes to a cluster, a Syncer puts its [ClusterFinalizer]
// on the Cluster. There is one per type and federation (Options.Identity), so one federation
// that has cleaned up never releases a Cluster another still has objects in.
// A Syncer remembers the Clusters it holds by uid. A Cluster deleted and made again under
// the same name is a new Cluster: every shard holds it again before it creates an object
// there, even a shard that never saw the old one go.
//
// When the Cluster is deleted, every federated object's pass treats the cluster as no longer
// placed. By default it orphans its object there ([RemovalOrphan]): removing a cluster from
// the federation never stops its workloads. [RemovalDelete] deletes it instead
// (Options.ClusterRemoval). [Syncer.ReconcileCluster], which Run calls for Cluster changes,
// removes the finalizer once nothing of the Syncer's is left in the cluster. If the cluster
// cannot be reached, it removes it after Options.DeletionTimeout with a MembersLeftBehind
// event. Every Syncer that ever placed objects in a cluster must be running for its Cluster
// to go away, as with any finalizer.
//
// # Status
//
// Sync writes its own fields only, and only when they changed:
//
//   - status.clusters[] entries' propagation ("" when in sync, else one of the Reason
//     constants), message and revision, and which clusters the list holds;
//   - the message of a cluster in sync: what its member warned about the last write there
//     (below), until the next write;
//   - status.syncedRevision, status.observedGeneration and status.rollout;
//   - the Propagated and RolledBack conditions.
//
// The scheduler's schedule and the collector's observed fields survive every sync write.
//
// # Goroutines
//
// Run writes to members on a pool that grows with the work, up to Workers ×
// ClusterConcurrency writers. A writer idle for 30 seconds on Options.Clock exits, so an idle
// Syncer holds none.
//
// # Failure
//
// A failure in one cluster never stops the others.
//
//   - Clusters that are not ready get no writes (and no deletes) and report
//     [plan.ReasonClusterNotReady].
//   - An unreachable member reports [plan.ReasonClusterUnreachable]. The pass returns an error, so
//     the object is retried with backoff. So does a Ready cluster the cluster set has no
//     client for yet ([plan.ReasonClusterNotFound], or ReasonClusterNotReady from the set).
//   - A member that refuses the object (invalid, forbidden) reports why and waits for a
//     change.
//   - Bad input is recorded in the Propagated condition and returned wrapped with
//     federation.Terminal: an object that does not decode or validate, an invalid placement.
//   - A workload every member would refuse is not sent (federation.ValidateMember: a selector
//     that does not match the pod labels, a container without an image). [plan.Decide] decides
//     [plan.ReasonInvalidMember], naming the member's field, and nothing is retried until the
//     object changes.
//
// # Warnings
//
// A member's API server drops a field its type does not have (a typo such as
// imagePullPolicyy, an Ingress's v1beta1 serviceName) and answers the write with a warning.
// [plan.Decide] finds those fields itself, from the schema of the Go type of every built-in kind
// (the one drift is compared with, built once per Syncer), and lists them in
// [plan.Change].Unknown; the write goes out all the same. The Syncer hands every write a warning handler (federation.WithWarningHandler), so a
// member's Warning headers, whatever they say, reach it. What a cluster's write was warned
// about, the member's words first, then the unknown fields it did not mention, is that
// cluster's status.clusters[].message (its propagation stays "": the object runs there). It
// stays until the next write there. The Propagated condition names the clusters that warned,
// and one [plan.EventMemberWarning] Warning event per pass says what each was warned about.
//
// # Events
//
// Each event is a write to the host. So a pass reports its member writes in one Normal event
// per reason, naming every cluster it wrote, not one per cluster: [plan.EventCreatedInCluster],
// [plan.EventUpdatedInCluster], [plan.EventDriftCorrected], [plan.EventDeletedFromCluster],
// [plan.EventOrphanedInCluster]. A failure is one Warning per cluster, with the propagation reason
// and the member's error.
//
// # Your own queue
//
// An embedder that calls Reconcile from its own queue gets Run's triggers from two helpers.
// [Syncer.WatchMembers] queues the key of an object whose member object changed or went away.
// [ClusterChanged] says which Cluster updates should requeue every object.
// examples/controllerruntime shows both in a controller-runtime controller.
//
// # Options
//
// Every default of [Options] is a Default* constant. New refuses invalid Options with an
// error wrapping [ErrInvalidOptions] that names the field.
//
// [package hostcache]: https://pkg.go.dev/github.com/fedkit/fedkit/hostcache
// [package status]: https://pkg.go.dev/github.com/fedkit/fedkit/status
package sync
