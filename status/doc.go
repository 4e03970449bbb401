// Package status is the pull side of a federation: the [Collector] writes what members run
// into each federated object's status, and the [ClusterMonitor] keeps every Cluster true.
//
//	c, err := status.New(host, clusters, federation.DeploymentType, status.Options{})
//	res, err := c.Reconcile(ctx, federation.Key{Namespace: "production", Name: "web"})
//	// or: err = c.Run(ctx)
//
//	m, err := status.NewClusterMonitor(host, clusters, status.MonitorOptions{})
//	res, err = m.Reconcile(ctx, federation.Key{Name: "cluster-aws-us-east"})
//	// or: err = m.Run(ctx)
//
// The monitor keeps each Cluster's health, capacity and taints. Both follow the shape of
// every fedkit loop: read, decide with a pure function, write only what changed. Reconcile is
// one pass over one key and starts nothing; Run is optional. Options.Cache and
// MonitorOptions.Cache are the process's shared host cache ([package hostcache]); nil gives
// each Run its own.
//
// # What the Collector owns
//
// A federated object's status is shared by several loops, and each writes only its own
// fields. The Collector owns these:
//
//   - the observed fields of the status.clusters[] entries: replicas, readyReplicas,
//     availableReplicas, updatedReplicas, observedGeneration, remoteStatus, ready,
//     observedRevision, unhealthySince, lastObserved, stale;
//   - status.aggregated and the Ready condition.
//
// Sync owns the rest of each entry (propagation, message, revision). Sync also decides which
// clusters the list holds: it adds an entry for each placed cluster and removes the entries
// of clusters no longer placed. So the Collector's placed clusters are exactly the ones
// status.clusters lists. It fills and refreshes their observed fields, and never adds or
// removes an entry.
//
// An entry's ready says whether the member object was ready when last observed.
// observedRevision says which revision it carried (its federation.RevisionAnnotation). With
// stale, these are what sync's staged rollouts judge a stage by. unhealthySince says since
// when, with fresh data, the member has run its rendered revision without being ready:
// application failover reads it. A member that is not ready but progressing is not
// unhealthy: a Deployment whose rollout progresses within progressDeadlineSeconds with its
// availability held ([Observation].Progressing). Only a stalled or failing one is.
//
// A write is the object as read with the Collector's fields replaced, locked on its
// resourceVersion. After a Conflict the pass starts again from a fresh read. With
// Options.StatusWriter the Collector hands its fields to that shared writer, matched to
// entries by name. It is told of sync's pending changes, so a new object's first status is
// one write.
//
// # Extraction
//
// An [Extractor] turns a member object into an [Observation]: counts, the observed
// generation, selected status fields (remoteStatus) and whether the object is ready. For
// workloads, ready means what `kubectl rollout status` waits for. The built-in table
// ([DefaultExtractors]) covers Deployment, ReplicaSet, StatefulSet, DaemonSet, Job and
// Service. Every other kind gets [RulesExtractor]: [GenericStatus]'s defaults (its conditions
// and raw status, with remoteStatus capped at Options.MaxRemoteStatusBytes), the desired
// count at the type's ReplicasPath, and the kind's rules in CEL from its type configuration
// (federation.KindRules, package kinds). A rule that fails or does not compile makes that
// member not ready with the rule's error, and a [EventKindRulesFailed] Warning once per
// object, cluster and message. [KindExtractor] is the choice between the two, which `kubectl
// fed get` and a user's tests use too. Options.Extractors adds kinds or replaces built-in
// ones. Go extractors cost about a twentieth of the same rules in CEL (BenchmarkDeploymentExtractor),
// so the built-in kinds keep theirs. Extractors are pure functions and never panic. A field of the wrong
// type is an error naming it, reported in the Ready condition for that cluster.
//
// # Freshness and quorum
//
// This section defines fresh and stale data for every loop. A member cache keeps serving its
// last state while its cluster is cut off. A live read of an unreachable cluster simply
// fails. So an entry's values alone do not say whether they are still true.
//
// The Collector judges that in memory: it remembers, per object and cluster, when it last
// read the member successfully. An observation is stale when that is older than
// Options.StaleAfter (three periods by default), or when the Cluster is not Ready (the
// ClusterMonitor decides that). A cached read counts only from the last time its member cache
// was in contact with the cluster (federation.MemberCacheHealth). So a cut-off cluster goes
// stale even while its Cluster still says Ready. A stale entry stays visible, with its last
// known values and stale: true, and is left out of the sums. After a restart the memory is
// empty, and one successful read makes an entry fresh again.
//
// The quorum rule is the specification's "collect the majority's status, ignore the stale
// data of a partitioned minority". status.aggregated is the sum over the fresh clusters only
// when they are more than half of the placed clusters. Otherwise status.aggregated keeps its
// last good sums, and its staleClusters counts the stale clusters now. Ready is then Unknown
// with reason NoQuorum. So numbers built from a partitioned minority are never published.
// [Aggregate] is the rule as a pure function, and its example walks through it.
//
// The Ready condition is True, with observedGeneration N, only when the members run
// generation N's revision and are ready. That is:
//
//   - sync has propagated N: status.observedGeneration, a True Propagated condition for N,
//     no rollout holding the revision, every entry at the current revision;
//   - every placed cluster has fresh data and reports its object up to date and fully
//     available.
//
// So `kubectl wait --for=condition=Ready` waits for a new generation. Otherwise Ready is one
// of these:
//
//   - Unknown with WaitingForPropagation (sync has not passed over N yet) or NoQuorum;
//   - False with NotPropagated, naming the clusters that do not run N's revision, and why
//     (a member refused it, a rollout holds it);
//   - False with NotReady, naming the clusters that are not ready, and why;
//   - False with StaleClusters, naming the clusters without fresh data;
//   - False with NoClusters when nothing is placed.
//
// Sync may not have passed over a new object yet: no status.clusters, and no Propagated
// condition or sync's WaitingForSchedule. Then the Collector writes nothing. There is nothing
// to observe yet, and sync's status write brings the object back to it.
//
// # No churn
//
// Status writes that trigger more reconciles can keep a control plane busy for minutes
// (KubeFed #1373). The Collector writes at most once per pass: a write that conflicts is
// redone on a fresh read, not added to. It writes only when one of its fields changed:
// observed values, staleness, the aggregate, or the Ready condition's status, reason or
// message. Timestamps alone never cause a write. lastObserved changes only with an entry's
// values or staleness. On a write that happens anyway, it moves forward in entries whose
// stamp is more than StaleAfter/2 old. A fleet where nothing changes costs no writes at all,
// however long it runs.
//
// The scheduler reads status.clusters[].replicas of fresh entries as the replicas each
// cluster currently holds. For workloads that is the member's desired count (spec.replicas as
// the member has it). readyReplicas, availableReplicas and updatedReplicas are the observed
// progress, as kubectl shows READY 2/3. The desired count follows what sync pushed, which
// follows the schedule, so the two loops meet in a fixed point. status.replicas, the pods
// that exist, would lag every move by the time pods take to start and stop. A scheduler
// reading it would move replicas back after each refill.
//
// # The ClusterMonitor
//
// This section says when a cluster is not ready and which taints it gets; package placement
// says what placement does with them. Every Period (10s) the monitor probes each member's
// API server: GET /readyz through federation.HealthChecker, bounded by Timeout (3s). One
// failed probe never flips a cluster. Ready turns False after FailureThreshold (3) failures
// in a row, and True again only after SuccessThreshold (3) successes in a row.
//
// That is hysteresis. A cluster that loses Ready again before it has held True for
// ReadinessWindow (15m) needs twice as many successes the next time, up to eight times. So a
// member that answers one probe in four flips a few times, not at every lucky probe. A new
// cluster turns Ready on its first success. Offline is True while the cluster cannot be
// reached at all. The counters live in memory; the Cluster's conditions are the state that
// survives a restart.
//
// Alongside, the monitor reads the member's version, nodes and pods. It does so at most
// every HeartbeatInterval (1m) and on every transition, each request bounded by Timeout as
// well. A member that accepts a request and never answers holds one worker for Timeout,
// never the loop. It records these:
//
//   - status.kubernetesVersion;
//   - status.region and status.zones: spec.region and spec.zones when set, else the nodes'
//     topology labels;
//   - status.capacity, the most the cluster can run: the allocatable resources summed over
//     the nodes a workload can be scheduled to. Those are Ready, not cordoned
//     (spec.unschedulable), and without a NoSchedule or NoExecute taint (control-plane
//     nodes, nodes the node controller marked not ready or unreachable). PreferNoSchedule
//     counts.
//   - status.available, the headroom, how much more fits: capacity minus the requests of
//     pods on those nodes that are not finished, and of pods not bound yet.
//
// The scheduler's capacity strategy reads available (scheduler.ReplicaCapacity divides it by
// a replica's requests).
//
// While Ready is not True the monitor taints the Cluster with federation.TaintClusterNotReady,
// and with federation.TaintClusterUnreachable when it cannot be reached. The taints are
// NoSchedule at first. They become NoExecute once the cluster has been not Ready for
// EvictionDelay (5m) in all within ReadinessWindow. The count goes on across flips instead
// of starting again at each. It is this monitor's own observation on its own clock, never a
// lastTransitionTime another replica wrote. A NoExecute taint stays until Ready is True, so a
// restart brings no evicted work back.
//
// A fleet disruption is the control plane's own outage, not the fleet's: every cluster lost,
// or a large share of the fleet lost within a short window (placement.FleetDisruption, with
// MonitorOptions.Disruption; by default at least 55% of the fleet and 3 clusters within 5
// minutes). While the fleet is disrupted, no taint turns NoExecute: the lost clusters stay in
// the NoSchedule stage, and their Failover condition says FleetDisrupted. The clusters that
// came back within the window count with the lost ones. A Ready cluster the monitor has not
// reached within the window (status.lastHeartbeatTime) does not count: after a long gap (the
// control plane down or cut off) the monitor probes the clusters one by one, and judges the
// first it finds lost among those it has reached since, not by the others' old Ready. So
// HeartbeatInterval must be shorter than the window. So when contact returns cluster by
// cluster, nothing is drained while the others come back; a cluster still lost once enough
// have been back for the window is an outage of its own. The judgement is made from the
// Cluster objects alone, so it survives a restart and every replica makes the same. A
// NoExecute taint set before the disruption began stays. One set since it began goes back to
// NoSchedule: a cluster not Ready for long within the readiness window turns NoExecute at its
// first failed probe, before the monitor has lost the others and sees the disruption.
//
// A NoExecute taint without timeAdded, the user's included, gets one when the monitor first
// sees it, as Karmada's API does: a toleration's tolerationSeconds counts from timeAdded and
// would never end without it. The stamp is written to the Cluster.
//
// Placement honours both taints. Other taints in spec.taints are the user's and are never
// touched. Taints are added before the status says not ready and removed after it says
// ready. So placement never sees a not-ready cluster without the monitor's taints (that
// would imply a NoExecute one).
//
// # Failover stages and their timers
//
// This is the one table of failover's stages. The Cluster's Failover condition names the
// stage. Each change is one event (part of the Ready event when Ready changes with it).
//
//	stage           when                                 placement                       timer
//	NoSchedule      Ready turns False (or Unknown)       no new placements; what runs    EvictionDelay (5m) of not
//	                not-ready taint NoSchedule           there stays                     Ready within ReadinessWindow
//	NoExecute       not Ready for EvictionDelay          untolerated: replicas leave;    tolerationSeconds, from the
//	                not-ready taint NoExecute            tolerated: they stay            taint's timeAdded
//	FleetDisrupted  not Ready while the fleet is         no new placements; what runs    none while it lasts; it ends
//	                disrupted (a control plane outage):  there stays; no NoExecute       Disruption.Window after
//	                not-ready taint stays NoSchedule                                     enough clusters are back
//	Recovered       Ready True again                     taints removed; may be chosen   SuccessThreshold probes, more
//	                (condition False)                    again                           for a cluster that flaps
//	replicas        any loss of replicas (above,         the losing cluster keeps them   spec.placement.failover
//	leaving         application failover, rebalance)     until replacements are ready    .gracePeriodSeconds (600)
//	                the losing cluster out of reach      its copy stays until it is      a new grace period
//	                (not Ready, stale data)              back; replacements rechecked    from its return
//	application     Ready cluster, workload not Ready    the cluster is left out, then   application.toleranceSeconds
//	failover        nor progressing, at its revision,    avoided (status.schedule        (300), then backoffSeconds
//	                fresh data (.unhealthySince)         .avoided)                       (600)
//
// The Failover condition's message says since when, and when NoExecute will come. Package
// placement applies the taints (placement.Place). Package scheduler applies application
// failover and the grace period (its "Graceful eviction" section).
//
// The monitor writes taints by updating the Cluster. RBAC cannot limit that to spec.taints,
// so config/rbac adds an admission policy that refuses the control plane any other spec
// change.
//
// A probe that changes nothing writes nothing. status.lastHeartbeatTime moves at most every
// HeartbeatInterval, so a healthy fleet of N clusters costs N status writes a minute.
//
// # Credentials that expire
//
// The monitor asks each member's client when its credentials expire
// (federation.CredentialsExpiryGetter: federation/kube reads a ServiceAccount token's exp
// claim and a client certificate's NotAfter, never verifying or keeping the token). The
// Cluster's CredentialsExpiring condition says when: False while the time is further off
// than CredentialsWarning (7 days), True with a Warning event once within it, and again once
// it has passed. Renewed credentials turn it False with a Normal event. A client that cannot
// tell (an opaque token, basic auth) leaves no condition.
//
// # Options
//
// Every default of [Options] and [MonitorOptions] is a Default* constant. New and
// NewClusterMonitor refuse invalid options with an error wrapping [ErrInvalidOptions].
//
// [package hostcache]: https://pkg.go.dev/github.com/fedkit/fedkit/hostcache
package status
