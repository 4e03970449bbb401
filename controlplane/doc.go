// Package controlplane runs every fedkit loop together, in one call.
//
//	host, clusters, err := kube.ConnectKubeconfig("", "host", kube.ClusterSetOptions{Logger: log})
//	cp, err := controlplane.New(host, clusters, controlplane.Options{Logger: log, Registerer: reg})
//	err = cp.Run(ctx) // until ctx is done
//
// It is the optional composition that turns fedkit's packages into a federation control
// plane. It plays the part of KubeFed's controller manager or karmada-controller-manager, but
// inside the embedder's own process.
//
// # When to use it, and when not
//
// Use it when you want the whole federation. That is the cluster monitor keeping Cluster
// status true, the DNS loop and the dependencies loop. For each federated type it is the
// scheduler (status.schedule), sync (the member objects) and the status collector
// (status.clusters, Ready). [New] builds each loop with its package's own constructor and
// [Options]. [ControlPlane.Run] runs them all and joins them.
//
// Use the loops' packages instead when you want only some of them, or want to drive them
// from your own machinery. Every loop has its own New and a one-pass Reconcile(ctx, key). Its
// Run(ctx) error can run in a controller-runtime manager as a RunnableFunc. The control plane
// adds nothing a loop needs; it is a convenience, not a framework. [Options].Disable switches
// off single loops (no DNS, a cluster monitor you run elsewhere).
//
// # What Run runs
//
// Run runs one scheduler, one Syncer and one Collector per type of [Options].Types. That is
// every built-in type by default, federation.BuiltinTypes. It also runs one ClusterMonitor,
// one DNS Controller, one dependencies loop (package dependencies:
// spec.propagateDependencies), one propagation loop per namespaced type but Secrets (package
// propagation, DefaultTypes; Disable.Propagation), and the ClusterSet's own Run when it has
// one. One policy monitor writes the policies' status for all the propagated types it finds
// served (propagation.PolicyMonitor, loop "propagation/policies"). One autoscaler (package
// autoscale, loop "autoscale"; Disable.Autoscale) writes the fleet total of every preference
// with spec.autoscale, over the divisible types the host serves. A kube.ClusterSet must run to keep its member clients in line with the Cluster
// objects, and to host the member caches the loops read. A fake.Fleet's Run drives its
// simulated workload controllers. For pull clusters (Cluster spec.mode: Pull), pass the set
// agent.NewClusterSet makes over yours: it serves them through their Assignments on the host
// and hands on your set's caches and Run (fedkit-controller-manager does). Options' common
// fields (Clock, Logger, Registerer, Events, Identity) reach every loop whose own options
// leave them unset.
//
// Sync waits for the scheduler. The control plane sets [fedsync.Options].WaitForScheduler
// for every type whose scheduler it runs. It does not with Disable.Scheduler, nor when
// Scheduler.Namespace restricts the scheduler to a namespace sync is not restricted to.
// Package sync's "Waiting for the scheduler" says what that does. In short, a new object
// never runs the template's replica count in every cluster for a moment, as KubeAdmiral's
// pending controllers ensure. An object the scheduler refuses is propagated nowhere, with
// Propagated=False and reason NotScheduled.
//
// # Types configured on the host
//
// With [Options].TypeConfigs (fedkit-controller-manager's --type-configs, on by default), the
// loop "typeconfigs" watches the host's FederatedTypeConfigs (`kubectl fed enable` writes
// them) and runs a scheduler, a Syncer and a Collector for each configured type, besides
// Types, with the kind's rules (package kinds). A configuration created starts its loops; a
// change of its spec stops them and starts them again with the new configuration; a deleted
// one stops them. No process restarts, the other loops go on, and no member object is
// touched: stopping a loop deletes nothing. Each is supervised like every other loop (its
// CRD checked, retried every RetryPeriod, listed in Status as "sync/FederatedWidget").
// The configuration's Ready condition says what runs. One that does not decode, whose rules
// do not compile, or whose federated kind Types or another configuration has already, starts
// nothing (reason InvalidTypeConfig, InvalidRules or Conflict, and a Warning): the last valid
// configuration of that name keeps running, as invalid input never stops what works. Rules
// that do not compile with no configuration before still start the loops, and every object
// of the type says the error (its members not ready, a KindRulesFailed Warning). A
// FederatedTypeConfig is a small cluster-scoped object, as KubeFed's was, rather than a
// ConfigMap: the API server checks its fields, it has a status to say what is wrong, RBAC
// names it, and `kubectl get ftc` lists the types federated. [DecideTypeConfig] is the
// loop's decision (what runs for a configuration, and its Ready condition), pure, and
// [ReportTypeConfig] its status write: an embedder that runs the loops itself (the chaos
// soak does) calls them to run configured types as the control plane does.
//
// # A type whose CRD is missing
//
// A host need not serve every federated type: a platform team installs the CRDs of the types
// it federates. Before starting the loops, Run lists (limit 1) each resource they watch, as
// each loop states it (its Watches method: the scheduler's, sync's, the collector's...; the
// control plane keeps no list of its own), and [ControlPlane.Ready] waits for the same
// resources' caches. A loop whose resource the host does not serve is not started. It is reported in
// [ControlPlane.Status] as [StateFailed], with an error wrapping [ErrNotServed] that names
// the resource, and logged once. The other loops run. Every [Options].RetryPeriod (a minute
// by default) it is checked again. So installing the CRD later brings its loops up without a
// restart.
//
// The dependencies loop needs only the Clusters and the dependency kinds' federated types and
// native objects. It runs over the workload types the host serves. [LoopStatus].Partial names the others,
// wrapping [ErrNotServed], and the log says so once. They are checked every RetryPeriod;
// once one is served, the loop restarts with it.
//
// The check cannot catch everything: a CRD deleted while the loops start, RBAC that forbids
// the list. A loop that cannot list what it watches fails after its CacheSyncTimeout with an
// error wrapping [ErrCacheNotSynced]. It is reported and retried the same way.
//
// Every loop may fail at once, the ClusterSet's Run aside: a host with none of fedkit's
// CRDs, a wrong kubeconfig context. Only then does Run give up and return an error wrapping
// [ErrAllFailed] with each loop's reason. The process exits and is restarted, as with a
// controller-runtime manager whose cache cannot sync.
//
// # Events
//
// The loops record Kubernetes events on the objects they act on (sync: created, updated,
// deleted in a cluster, drift corrected, failures). With [Options].Events nil, Run starts a
// client-go record.EventBroadcaster. It writes them to the host as core/v1 Events through a
// kube.EventSink, so `kubectl describe federateddeployment web` shows them. Run shuts it down
// before it returns. Give your own recorder in Options.Events (a controller-runtime
// manager's GetEventRecorderFor), or set Disable.Events to record none.
//
// Each Event is a host write. The recorder Run starts writes Warnings at once. It drops the
// Normal events of a federated object's first rollout (generation 1, no Ready condition
// yet): its Scheduled, Propagated and Ready conditions say the same. It gathers other Normal
// events per namespace and reason for [Options].EventWindow. One object's are written as
// recorded; several objects' as one digest naming each object and its clusters. The loops
// log every event, dropped ones included.
//
// # The gate
//
// One gate (package gate), with the control plane's namespace and [Options].Invariants, the
// embedder's own rules, goes to sync, propagation, dependencies and DNS: every destructive
// write of theirs is checked against it before it is sent (ARCHITECTURE.md, "What fedkit
// may destroy, and who decides").
//
// # Status writes
//
// The scheduler, sync and the collector share one status writer (package
// internal/statuswrite). What they change in one object within [Options].StatusWindow is
// one status write, each loop's fields its own. A new object costs the host three writes,
// Events included: sync's metadata patch, its ControllerRevision and that status write. With
// LeaderElection the writer runs while the replica leads; what is pending when it loses the
// Lease is dropped, since its successor may be writing already and decides again from the
// objects. With Sharding each loop writes its own status: a pending write could land after
// its object's shard moved.
//
// # Goroutines, time and errors
//
// New starts nothing and contacts nothing. Run starts every goroutine (the loops', the
// broadcaster's) and joins them before it returns. Time comes from [Options].Clock, so a
// test drives a whole control plane on a fake clock (see the package's tests). Only
// client-go's broadcaster stamps events with the wall clock. Errors are prefixed
// "controlplane: " and name the loop; sentinels are matched with errors.Is.
//
// # Running several replicas
//
// Without further options a control plane assumes it is the only one: two replicas would
// both write every object. Three options let several replicas share the work. Each goes
// through coordination.k8s.io/v1 Leases on the host, with client-go's tools/leaderelection
// underneath.
//
//   - [Options].LeaderElection: one replica runs every loop, and the others stand by. Their
//     loops are [StateStandby] in Status. The leader may stop renewing its Lease (it
//     crashed, or lost the host). Then a standby takes over LeaseDuration after it last saw
//     the Lease renewed, plus up to a RetryPeriod. That is 15 to 17s with client-go's
//     defaults (15s, 10s, 2s), and 2 to 2.5s in this module's tests with a 2s Lease. This
//     buys availability, not capacity: the leader does all the work. A leader that cannot
//     renew stops its loops RenewDeadline after its last renewal. They return before the
//     Lease can expire, so two replicas never write at once. Set Lease.ReleaseOnCancel when
//     Run is stopped only on graceful shutdowns, so a standby takes over at once.
//   - [Options].Sharding: the keys are split into Count shards, with one Lease each. Keys
//     are the federated objects (by a stable hash of namespace/name, federation.ShardOf),
//     the Clusters of the monitor (by name) and the DNS records. The replicas split the
//     shards evenly. Each runs one set of loops per shard it holds, every loop with
//     Options.Shard set to it (package internal/loop explains that filter). The shards of a
//     replica that dies move to the others once their Leases expire, one by one. That takes
//     2.3 to 2.9s with a 2s Lease in the tests. So a shard never runs in two replicas at
//     once. Status lists the loops of the shards held, each with its Shard.
//     When a replica joins, the others hand it shards only once it is live. They saw it
//     renew its presence Lease, and it says there that it wants shards (it has listed the
//     Leases). Until then every shard keeps running where it is. A shard is released only
//     for a live peer that wants it. One left free for a LeaseDuration (the replicas' views
//     disagree) is taken by any replica, beyond its share.
//   - [Options].Shard: a static shard, for embedders who assign them (a StatefulSet's
//     ordinal and replicas). There is no Lease, and it is up to the embedder that one
//     process runs each shard. Combined with LeaderElection, the replicas of each shard
//     elect their own leader (the Lease's Name ends in "-<Index>").
//
// LeaderElection and Sharding together are an error. The shard Leases already keep two
// replicas from running the same keys, and a replica that holds no shard is a standby.
//
// What each costs. A set of loops is a cluster monitor and the DNS loop, plus a scheduler, a
// Syncer and a Collector per type. They share one host informer cache per process ([package
// hostcache]): one informer, one watch and one copy per host resource. New makes it and Run
// runs it, or pass your own in Options.Cache. Sharding divides the reconciles, not the
// caches. Every informer still lists and watches all objects of its resource: a reconcile
// reads Clusters and preferences of any shard, and shards move at run time. So a replica
// holding k shards runs k sets of loops over one host cache. The member caches are the
// ClusterSet's and are shared by its shards. Static shards in one process (one control plane
// per Options.Shard) share a host cache when given the same Options.Cache, which their owner
// runs. Choose Count as a small multiple of the replicas (2 to 4 per replica). That is enough
// for shards to spread evenly and move one at a time, and few enough to keep k small. Leader
// election costs a standby nothing but the ClusterSet's watches. It costs the new leader a
// cache sync when it takes over: its loops list what they watch.
//
// What runs on every replica. The ClusterSet's own Run and the event broadcaster run on
// every replica, leading or not, holding shards or not. The ClusterSet only reads (Clusters
// and Secrets, to keep member clients ready for a takeover). The broadcaster writes only the
// events the loops record, and a standby's loops record none. A few writes belong to no one
// shard. The Syncer of every shard adds its finalizer to a Cluster, and creates a missing
// member Namespace, before its first object there. Both are idempotent.
//
// When every loop of a set has failed (the host has none of the CRDs), Run returns an error
// wrapping [ErrAllFailed], as a single replica does. A leader releases its Lease first, and
// with Sharding every shard of the replica stops. Elections run on the real clock, since
// client-go's elector takes no clock. Options.Clock drives the loops only.
//
// # Readiness and version
//
// [ControlPlane.Ready] is a readiness check for the process that runs the control plane. It
// returns nil while Run runs and every loop it runs has synced its caches, or while the
// replica stands by (no Lease, no shard held); a failed loop does not hold it back.
// fedkit-controller-manager serves it as /readyz. [Options].Version names the program's
// version on every Lease the replica writes (federation.ControlPlaneVersionAnnotation), so
// `kubectl fed version` can say which version leads or holds each shard.
//
// # Testing with package fake
//
// The fake host and fleet serve every loop, so a whole control plane runs in a unit test:
// see the package example. Run detects the fleet's Run and drives its simulated controllers
// too.
//
// [package hostcache]: https://pkg.go.dev/github.com/fedkit/fedkit/hostcache
package controlplane
