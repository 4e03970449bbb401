// Package soak is a deterministic chaos soak for a federation control plane: every feature at
// once, with the invariants users rely on.
//
//	res, err := soak.Run(ctx, soak.Config{Seed: 42, Clusters: 20, Objects: 500}, soak.Loops)
//	// res.Violations lists what went wrong, each with the command that replays its seed.
//
// A seed becomes a fleet of fake member clusters, a host full of federated objects, and a
// script of random events:
//
//   - template, override, preference and placement edits;
//   - deletions, some orphaning;
//   - partitions and their healing;
//   - clusters joining and leaving, and clusters unjoined then joined again under the same
//     name;
//   - drift and other controllers' writes in the members;
//   - injected errors, Conflicts and latency;
//   - clock jumps;
//   - drains: a NoExecute taint on a Cluster's spec.taints, removed later;
//   - PropagationPolicies and ClusterPropagationPolicies over native Deployments on the host:
//     created, edited, made invalid in ways the API server accepts (an override path without
//     its slash, a selector operator without values), mended, deleted, and competing by
//     priority, one of them selecting every Deployment;
//   - dependencies: workloads with spec.propagateDependencies referring to ConfigMaps,
//     Secrets and PersistentVolumeClaims; some Secrets federated by the user with their own
//     placement and exclusions; per-cluster overrides that point a cluster's pods at another
//     Secret; claims the user deletes;
//   - application failover: workloads that fail over when unhealthy, members whose rolling
//     updates take minutes, and images that never start (in every member, or in every third);
//   - the control plane cut off from every member at once, for longer than the cluster
//     monitor's eviction delay, then healed cluster by cluster;
//   - member objects KubeFed made, then the objects `kubectl fed migrate` converts from
//     KubeFed's, which take them over;
//   - staged rollouts (a canary stage, then everyone) with automated rollback;
//   - objects no federation manages in the members: kube-system's own, another team's in the
//     namespaces the federation uses, objects of the federated objects' names;
//   - a configured kind: widgets.example.com, a custom resource in the host and every member
//     (its replicas at spec.scale.count, a status with conditions its own controller in each
//     member writes, a ConfigMap it refers to, a field that controller owns), enabled while
//     the loops run by the FederatedTypeConfig `kubectl fed enable` writes (with CEL rules:
//     readiness, replica counts, status values, the ConfigMap a dependency, the owned field
//     retained), its rules made stricter, made not to compile and mended, made to fail on
//     every widget and mended, then disabled and enabled again; FederatedWidgets created,
//     edited, overridden and deleted meanwhile (deterministic mode only; the script's other
//     events are the same with or without it).
//   - autoscaling: workloads whose preference has spec.autoscale, with pods in every member
//     whose load flaps from step to step (a pod now and then without a sample, one member
//     serving no metrics at all), under the same partitions and outage.
//
// Some FederatedDeployments are created with spec.placement.failover: a purge mode and a
// short grace period. Each soak of 16 steps or more has each episode once: a cluster unjoined
// and joined again, the migration, a policy made invalid and mended, the outage, and a
// workload's pods pointed at another Secret in every cluster but one.
// Config.Without leaves features out.
//
// Two control planes share the host by default (Config.Shards), each running every loop over
// the keys of its shard (federation.Shard): Clusters, objects, namespaces.
//
// The control plane under test runs over it. After every step, and at quiescence, the harness
// checks the rules below. The harness never decides anything itself. Everything it expects
// is computed from the fakes' state with fedkit's pure functions: placement (Evaluate and
// Require), the schedule's own bounds, override rendering, sync's Plan and TargetsFor (with
// sync.RevisionHistory for a staged rollout), the dependencies' extractors and Clusters,
// propagation's Matches, Generate and Preference, status aggregation rules. It reports every
// difference as a [Violation]: the seed, the phase and step, the [Rule], the object, what is
// wrong, and the replay command. After a step a rule reports an object once.
//
// An embedder adds rules of its own in Config.Invariants (see [Invariant]).
//
// # Running it
//
// The test of this package runs a bounded size and one seed under `make test`, with every
// feature but two whose rules do not hold yet (see "Open findings"): -soak.without's default
// is kinds,autoscale; TestSoakReplaysExactly and the Example run every feature on a tiny
// fleet. `make soak SEEDS=... CLUSTERS=... OBJECTS=...` runs more, every feature on (WITHOUT=
// leaves some out). A failing seed prints itself
// and the command that replays it: go test ./test/soak -run 'TestSoak$' -seed=N (with its
// sizes). To see why, add these flags:
//
//   - -soak.v: every step and round;
//   - -soak.trace: every write that reaches a cluster, with the diff of status writes, and how
//     each update ended (the caller, the replicas or schedule it carried, its resourceVersion);
//   - -soak.out=FILE: every violation;
//   - -soak.dump=ns/name: an object's YAML at each check;
//   - -soak.skip=rule,...: rules left out (see [Config].Skip);
//   - -soak.without=feature,...: features left out (kinds, autoscale; see [Config].Without).
//
// # Open findings
//
// With every feature on, each small seed (5 clusters, 40 objects, 20 steps) tried fails
// some rule. They are fedkit's open defects or rules still to be judged, each with its replay:
//
//   - outage-moves-nothing (seeds 2, 4, 5, 6; -soak.without=kinds,autoscale passes seed 1):
//     while the control plane is cut off from every member, the monitor finds the clusters
//     lost one by one; until enough are, placement.FleetDisruption is false, and a lost
//     cluster whose status entry shows no copy (a create whose answer was lost, its status
//     never written) is held at 0 by the scheduler although the member runs a copy;
//   - invalid-rules-kept (seeds 1, 3, 5): a FederatedWidget stays Ready for three checks
//     after its rules changed to ones failing on a member the soak counts fresh; the control
//     plane alone turns it not Ready (controlplane TestTypeConfigsStartAndStopLoops);
//   - secret-referenced (seed 1 with every feature; seed 6 without): a Secret created in a
//     cluster where no workload that refers to it runs.
//
// # The control plane under test
//
// A [ControlPlane] is anything that can reconcile every key of every loop once, in a fixed
// order ([ControlPlane.Round]), and run its loops' Run goroutines ([ControlPlane.Run]).
// [Loops] builds the default one over a [World], from fedkit's loop types, one set per shard:
// status.NewClusterMonitor, propagation.New, dependencies.New, autoscale.New, and for each
// kind scheduler.New, fedsync.New and status.New; dnsrecord.New. Each set also runs the kinds
// the host's FederatedTypeConfigs configure, as package controlplane does: a pass over them
// each round decides what runs with controlplane.DecideTypeConfig and writes their Ready
// condition with controlplane.ReportTypeConfig. An embedder passes its own
// [Factory] to soak its own loops over the same seeded fleet.
//
// # Two modes
//
// Deterministic (the default): the harness drives the loops through Round, one Reconcile at
// a time in a fixed order, and steps the fake clock itself. Injected errors come from seeded
// sources, and latency steps the clock inside the call. So a seed replays exactly, call for
// call.
//
// Run ([Config.Run]): each loop's Run goroutine runs, and the script is applied between
// steps of the fake clock. The harness steps the clock until nothing writes any more. The
// script replays exactly; the interleaving of the goroutines does not. So a failure found in
// Run mode may need a few runs of its seed to show again. A member's latency is a wait on the
// fake clock, so a call to a slow member returns at the next step: a write sent before a
// check lands after it.
//
// # The rules after every step
//
// After every step of the script and every round of the first settling:
//
//   - foreign-untouched: no member object without this federation's identity (its
//     managed-by value) is modified, deleted or taken over, whoever's call it is: a guard on
//     every member's write path (see [World]; sync.Adoptable says which objects sync may
//     take over), and, after each step, every object seeded as no federation's (another
//     team's, kube-system's, another federation's) as it started (its status aside), and
//     every object the user made on the host still there and not taken over;
//   - system-namespaces: nothing in kube-system, kube-public or kube-node-lease is federated
//     from the host, and nothing there in a member is managed;
//   - claim-kept: a PersistentVolumeClaim the federation put in a member (managed, or
//     released when its workload left) leaves it only when the user deleted it (the host's
//     claim, or the user's own federated claim), dropped the cluster from its own placement
//     or asked for deletion (federation.ClaimRemovalAnnotation), or the cluster left: never
//     because its workload moved or went. A copy that was in a cluster out of reach when
//     the user deleted it goes when the cluster is back, even if the user has made a claim
//     of that name again meanwhile;
//   - secret-excluded: no Secret reaches a cluster its own placement explicitly excludes
//     (placement.Refused: excludeClusters, clusterAffinity.required, a taint it does not
//     tolerate);
//   - secret-referenced: a Secret reaches a cluster only where its own placement puts it or
//     a workload that refers to it there, after overrides (dependencies.WorkloadOf), is
//     placed or runs (judged by the host before the step and after it);
//   - capacity-floor: while a drained cluster's eviction lasts, or an application failover
//     moves a workload away, the available replicas of the reachable members never drop
//     below what they were before;
//   - drained-copy-kept: a drained cluster's copy is not deleted before the clusters the
//     schedule gives its replicas report them available;
//   - purge-never: with purge mode Never a drained cluster's copy is released, never
//     deleted, and stays released;
//   - outage-moves-nothing: while the control plane is cut off from every member, and until
//     every member is back and Ready, nothing moves in a cluster it counts lost (not Ready):
//     it gains no replicas and joins no schedule beyond what its copy runs, and where a copy
//     ran when the outage began no eviction of it begins, and it leaves none and loses none
//     of the replicas the copy ran but by an eviction decided before (what the user edits
//     meanwhile, or edited before and the scheduler had not acted on, what was already
//     moving or placed in a cluster already lost when the outage began, and the dependencies
//     following their workloads aside; a cluster is judged from the check before it was
//     counted lost, in Run mode from the first that finds it lost);
//   - blocked-takes-nothing: a divided workload whose status says sync cannot write it in a
//     cluster (federation.PropagationBlocked: an object of its name that is not the
//     federation's, a refused write, a cluster out of reach), before the step and after it,
//     gets no more replicas there than it had, or than its copy there runs;
//   - adopted-in-place: a member object KubeFed made is taken over by its migrated object in
//     place, never deleted and made again;
//   - disabled-kept: while a configured kind is disabled, no member widget, and no ConfigMap
//     a member widget refers to, is deleted or changed;
//   - invalid-rules-kept: rules that do not compile or fail on the widgets delete and change no
//     member widget that sync had propagated nor the ConfigMaps they refer to (a cluster not
//     Ready or tainted NoExecute aside), and no FederatedWidget is Ready while a rule fails
//     on a member it counts fresh (kinds' Evaluate);
//   - typeconfig-reported: a FederatedTypeConfig whose generation the control plane observed
//     is Ready True when its rules compile, and False with reason InvalidRules naming the rule
//     when they do not (kinds.Compile);
//   - no-thrash: an autoscaled workload's fleet total changes direction at most once per
//     stabilization window (judged at the checks, a round's slack allowed);
//   - never-zero: an autoscaled workload's fleet total is never below its minReplicas, and
//     while a majority of its scheduled clusters have been cut off longer than their data
//     stays fresh (autoscale's StaleAfter) the total holds;
//   - the embedder's invariants that are not Quiescent.
//
// The failover rules (capacity-floor, drained-copy-kept, purge-never) concern
// FederatedDeployments with a preference. Purge mode Immediately and an ended grace period
// are exempt. So is a step made unknowable by a partition, a healing, a clock jump, a cluster
// removed or the user's edit of the object, including one the scheduler or sync has not
// recorded yet (in Run mode an edit takes effect steps after it was made).
// Result.FailoverSkipped counts each exemption by reason. A copy that went with its
// namespace is not exempt: a FederatedNamespace drained at once keeps the namespace while the
// federation's objects live in it. A copy is counted up to what the schedule then gave its
// cluster, and up to what an update of it still under way sets. A copy whose eviction ended
// while its cluster was in reach, and that sync deletes only later, is judged when the
// eviction ended.
//
// The failover rules run in deterministic mode, and in Run mode only with Config.SampleRun
// (-soak.sample-run), as a Run-mode failure does not replay exactly. The other rules run in
// both modes.
//
// # The rules at quiescence
//
// With faults off (injected errors, latency, slow rolling updates, failing images),
// partitions healed and rounds run until nothing writes, and again with one member cut off,
// healed, and an hour later:
//
//   - placed-runs-render: every reachable placed cluster runs exactly the rendered object
//     (the render's desired-state hash, a revision no newer than the federated object's, and
//     nothing that sync's Plan would change), or, during a staged rollout, the revision the
//     rollout holds it at;
//   - placed-only: nothing the federation manages runs where it is not placed, unless a
//     MembersLeftBehind event announced it;
//   - schedule-follows-placement: the schedule names only clusters the placement (with the
//     clusters dependent workloads require) selects, divides a preference's total (less
//     when sync can write the object in none of them), and keeps no eviction;
//   - status-matches: status.clusters, schedule, syncedRevision, the conditions and
//     status.aggregated agree with the members; a partitioned cluster's entry is stale and
//     not counted;
//   - deletion-completed: no federated object, member object or Cluster is left
//     half-deleted;
//   - orphaned: member objects orphaned (a deletion with the orphan annotation, a cluster that
//     left) remain, without fedkit's labels and annotations;
//   - foreign-annotations: other controllers' annotations on member objects survive sync's
//     updates, and cause no federation write;
//   - generated-matches-native: every native Deployment propagation.Decide gives a policy
//     (from the policies on the host and the policy that federates it now) has the
//     Federated<Kind> and preference propagation.Generate and Preference render from it and
//     that policy; one whose policy is invalid keeps its generated object as it is; no other
//     has one, and none in a system namespace;
//   - unselected-kept: the member copies of a native Deployment no policy selects any more
//     (the policy deleted, edited away or made invalid) keep running, no longer managed;
//   - dependencies-follow: every ConfigMap, Secret and claim a workload refers to in a
//     cluster, after overrides, runs there, unless its own placement excludes the cluster;
//   - secret-excluded and secret-referenced, for every Secret copy;
//   - adopted-in-place: every member object KubeFed made, where its migrated object is
//     placed, is the federation's now, the same object;
//   - kind-status-aggregates: each FederatedWidget's status.aggregated sums, and each fresh
//     entry carries, what the kind's rules read from its members (status.KindExtractor), and
//     it is Ready exactly when every placed member is ready by them;
//   - placed-runs-render, placed-only, status-matches and deletion-completed hold for the
//     FederatedWidgets too, rendered with the kind's configuration (its retained field kept);
//   - quiet-hour: a further simulated hour makes no write but the cluster monitor's
//     heartbeats;
//   - settles and loops-healthy: the control plane stops writing within Config.MaxRounds,
//     every Reconcile returns without a terminal error on valid input, and Run stops when
//     asked;
//   - the embedder's invariants;
//   - no goroutine leaks (the package's test runs goleak) and no data race (-race).
package soak
