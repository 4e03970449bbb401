// Package status is the pull side of a federation: the [Collector] reads what the member
// clusters run and writes it back to each federated object's status, and the
// [ClusterMonitor] keeps every Cluster's health, capacity and taints true.
//
//	c, err := status.New(host, clusters, federation.DeploymentType, status.Options{})
//	res, err := c.Reconcile(ctx, federation.Key{Namespace: "production", Name: "web"})
//	// or: err = c.Run(ctx)
//
//	m, err := status.NewClusterMonitor(host, clusters, status.MonitorOptions{})
//	res, err = m.Reconcile(ctx, federation.Key{Name: "cluster-aws-us-east"})
//	// or: err = m.Run(ctx)
//
// Both follow the shape of every fedkit loop: read, decide with a pure function, write only
// what changed. Reconcile is one pass over one key and starts nothing; Run is optional.
// Options.Cache and MonitorOptions.Cache share one host informer cache (package hostcache)
// with other loops of the process; nil gives each Run its own.
//
// # What the Collector owns
//
// A federated object's status is shared by several loops, and each writes only its own
// fields. The Collector owns the observed fields of the status.clusters[] entries (replicas,
// readyReplicas, availableReplicas, updatedReplicas, observedGeneration, remoteStatus, ready,
// observedRevision, unhealthySince, lastObserved, stale), status.aggregated and the Ready condition. Sync
// owns the rest of each entry (propagation, message, revision) and decides which clusters
// the list holds: it adds an entry for each placed cluster and removes the entries of
// clusters no longer placed. An entry's ready says whether the member object was ready when
// last observed, and observedRevision which revision it carried (its
// federation.RevisionAnnotation): with stale, what sync's staged rollouts judge a stage by. So the Collector's placed clusters are exactly the ones status.clusters lists; it
// fills and refreshes their observed fields, and never adds or removes an entry. A write is
// the object as read with the Collector's fields replaced, locked on its resourceVersion;
// after a Conflict the pass starts again from a fresh read. With Options.StatusWriter the
// Collector hands its fields to that shared writer, matched to entries by name, and is told
// of sync's pending changes, so a new object's first status is one write.
//
// # Extraction
//
// An [Extractor] turns a member object into an [Observation]: counts, the observed
// generation, selected status fields (remoteStatus) and whether the object is ready, which
// for workloads means what `kubectl rollout status` waits for. The built-in table
// ([DefaultExtractors]) covers Deployment, ReplicaSet, StatefulSet, DaemonSet, Job and
// Service; every other kind gets [GenericStatus] (its conditions and raw status, with
// remoteStatus capped at Options.MaxRemoteStatusBytes). Options.Extractors adds kinds or
// replaces built-in ones. Extractors are pure functions and never panic: a field of the
// wrong type is an error naming it, reported in the Ready condition for that cluster.
//
// # Freshness and quorum
//
// A member cache keeps serving its last state while its cluster is cut off, and a live read
// of an unreachable cluster simply fails, so an entry's values alone do not say whether they
// are still true. The Collector judges that in memory: it remembers, per object and cluster,
// when it last read the member successfully. An observation is stale when that is older than
// Options.StaleAfter (three periods by default) or the Cluster is not Ready (the
// ClusterMonitor decides that). A cached read counts only from the last time its member cache
// was in contact with the cluster (federation.MemberCacheHealth), so a cut-off cluster goes
// stale even while its Cluster still says Ready. A stale entry stays visible, with its last
// known values and stale: true, and is left out of the sums. After a restart the memory is
// empty, and one successful read makes an entry fresh again.
//
// The quorum rule (the specification's "collect the majority's status, ignore the stale data
// of a partitioned minority"): status.aggregated is the sum over the fresh clusters only
// when they are more than half of the placed clusters. Otherwise status.aggregated keeps its
// last good sums, its staleClusters counts the stale clusters now, and Ready is Unknown with
// reason NoQuorum, so numbers built from a partitioned minority are never published. [Aggregate] is the rule as a pure function, and
// its example walks through it.
//
// The Ready condition is True, with observedGeneration N, only when the members run
// generation N's revision and are ready: sync has propagated N (status.observedGeneration,
// a True Propagated condition for N, no rollout holding the revision, every entry at
// the current revision) and every placed cluster has fresh data and reports its object up
// to date and fully available. So `kubectl wait --for=condition=Ready`
// waits for a new generation. Otherwise Ready is Unknown with WaitingForPropagation (sync has
// not passed over N yet) or NoQuorum; False with NotPropagated (naming the clusters that do
// not run N's revision, and why: a member refused it, a rollout holds it), NotReady (naming
// the clusters that are not ready, and why) or StaleClusters (naming the clusters without
// fresh data); False with NoClusters when nothing is placed. Before sync first passes over
// a new object (no status.clusters, no Propagated condition or sync's WaitingForSchedule) the
// Collector writes nothing:
// there is nothing to observe yet, and sync's status write brings the object back to it.
//
// # No churn
//
// Status writes that trigger more reconciles can keep a control plane busy for minutes
// (KubeFed #1373). The Collector writes at most once per pass (a write that conflicts is
// redone on a fresh read, not added to), and only when one of its fields changed: observed
// values, staleness, the aggregate, or the Ready condition's status, reason or message. Timestamps alone never cause a write: lastObserved changes only
// with an entry's values or staleness, and on a write that happens anyway it moves forward
// in entries whose stamp is more than StaleAfter/2 old. A fleet where nothing changes costs
// no writes at all, however long it runs.
//
// The scheduler reads status.clusters[].replicas of fresh entries as the replicas each
// cluster currently holds. For workloads that is the member's desired count (spec.replicas as
// the member has it), with readyReplicas, availableReplicas and updatedReplicas as the
// observed progress, as kubectl shows READY 2/3. The desired count follows what sync pushed,
// which follows the schedule, so the two loops meet in a fixed point; status.replicas, the
// pods that exist, would lag every move by the time pods take to start and stop, and a
// scheduler reading it would move replicas back after each refill.
//
// # The ClusterMonitor
//
// Every Period (10s) the monitor probes each member's API server (GET /readyz through
// federation.HealthChecker, bounded by Timeout, 3s). One failed probe never flips a cluster:
// Ready turns False after FailureThreshold (3) failures in a row, and True again only after
// SuccessThreshold (3) successes in a row. That is hysteresis: a cluster that loses Ready
// again before it has held True for ReadinessWindow (15m) needs twice as many successes the
// next time, up to eight times, so a member that answers one probe in four flips a few
// times, not at every lucky probe. A new cluster turns Ready on its first success. Offline
// is True while the cluster cannot be reached at all. The counters live in memory; the
// Cluster's conditions are the state that survives a restart.
//
// Alongside, at most every HeartbeatInterval (1m) and on every transition, it reads the
// member's version, nodes and pods, each request bounded by Timeout as well: a member that
// accepts a request and never answers holds one worker for Timeout, never the loop. It
// records status.kubernetesVersion; status.region and status.zones (spec.region and
// spec.zones when set, else the nodes' topology labels); status.capacity, the allocatable
// resources summed over the nodes a workload can be scheduled to: Ready, not cordoned
// (spec.unschedulable), and without a NoSchedule or NoExecute taint (control-plane nodes,
// nodes the node controller marked not ready or unreachable; PreferNoSchedule counts): the
// most the cluster can run; and status.available, capacity minus the requests of pods
// that are not finished on those nodes or not bound yet: the headroom, how much more fits.
// The scheduler's capacity strategy reads available (scheduler.ReplicaCapacity divides it
// by a replica's requests).
//
// While Ready is not True the monitor taints the Cluster with federation.TaintClusterNotReady
// (and federation.TaintClusterUnreachable when it cannot be reached): NoSchedule at first,
// NoExecute once the cluster has been not Ready for EvictionDelay (5m) in all within
// ReadinessWindow. The count goes on across flips instead of starting again at each, and it
// is this monitor's own observation on its own clock, never a lastTransitionTime another
// replica wrote. A NoExecute taint stays until Ready is True, so a restart brings no evicted
// work back. Placement honours both. Other taints in spec.taints are the user's and are never
// touched. Taints are added before the status says not ready and removed after it says
// ready, so placement never sees a not-ready cluster without the monitor's taints (it would
// imply a NoExecute one).
//
// # Failover stages and their timers
//
// This is the one table of failover's stages. The Cluster's Failover condition names the
// stage; each change is one event (part of the Ready event when Ready changes with it).
//
//	stage        when                                 placement                       timer
//	NoSchedule   Ready turns False (or Unknown)       no new placements; what runs    EvictionDelay (5m) of not
//	             not-ready taint NoSchedule           there stays                     Ready within ReadinessWindow
//	NoExecute    not Ready for EvictionDelay          untolerated: replicas leave;    tolerationSeconds, from the
//	             not-ready taint NoExecute            tolerated: they stay            taint's timeAdded
//	Recovered    Ready True again                     taints removed; may be chosen   SuccessThreshold probes, more
//	             (condition False)                    again                           for a cluster that flaps
//	replicas     any loss of replicas (above,         the losing cluster keeps them   spec.placement.failover
//	leaving      application failover, rebalance)     until replacements are ready    .gracePeriodSeconds (600)
//	application  Ready cluster, workload not Ready    the cluster is left out, then   application.toleranceSeconds
//	failover     at its revision with fresh data      avoided (status.schedule        (300), then backoffSeconds
//	             (status.clusters[].unhealthySince)   .avoided)                       (600)
//
// The Failover condition's message says since when, and when NoExecute will come. Package
// placement applies the taints (placement.Place); package scheduler applies application
// failover and the grace period.
//
// The monitor writes taints by updating the Cluster: RBAC cannot limit that to spec.taints, so
// config/rbac adds an admission policy that refuses the control plane any other spec change.
//
// A probe that changes nothing writes nothing; status.lastHeartbeatTime moves at most every
// HeartbeatInterval, so a healthy fleet of N clusters costs N status writes a minute.
//
// # Options
//
// Every default of [Options] and [MonitorOptions] is a Default* constant. New and
// NewClusterMonitor refuse invalid options with an error wrapping [ErrInvalidOptions].
package status
