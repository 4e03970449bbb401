// Package scheduler divides a federated workload's replicas among its clusters.
//
//	one := int64(1)
//	plan, err := scheduler.Divide(scheduler.Request{
//		Key:           "production/app-frontend",
//		TotalReplicas: 9,
//		Clusters:      []scheduler.ClusterState{{Name: "us"}, {Name: "eu"}, {Name: "ap", Capacity: &one}},
//		Preferences:   map[string]federation.ClusterPreferences{"*": {Weight: 1}},
//	})
//	fmt.Println(plan.Replicas, plan.Summary())
//
//	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
//	res, err := s.Reconcile(ctx, key) // writes status.schedule and Scheduled; or s.Run(ctx)
//
// [Divide] is the pure part. A [Request] goes in: the total, the candidate clusters with
// their current replicas and capacity, and the ReplicaSchedulingPreference's per-cluster
// bounds and weights. A [Plan] comes out, with every cluster's count and the reason for it.
// Divide does no I/O and reads no clock, and the same request always gives the same plan.
// Users unit-test their placement strategies against it directly.
//
// # Preferences
//
// Preferences map a cluster name, or "*" for every cluster without its own entry, to
// minReplicas, maxReplicas and a weight. A cluster with neither its own entry nor "*" gets 0,
// and is still listed with 0. No preferences at all means {"*": {weight: 1}}. A nil
// minReplicas counts as 0, as in KubeFed. The RSP defaulting of the federation package makes
// it 1 before the scheduler loop calls Divide.
//
// # Webster (the default)
//
// Webster's method (Sainte-Laguë), bounded. Its definition, seat by seat:
//
//  1. The candidates have a weight (when every weight is 0, they all count as 1), a lower
//     bound lo = minReplicas and an upper bound hi = the smaller of maxReplicas and capacity.
//  2. Minimums first, by weight descending then the tie order: each gets min(lo, hi, left).
//  3. With Rebalance off, each candidate starts at its current replicas clamped to
//     [its step-2 count, hi] (with Refill, at least its count in the division with Rebalance
//     on: its fair share). While that is more than the total, one replica is taken from
//     the candidate with the smallest weight/(2s-1) still above its step-2 count (ties: more
//     replicas first, then the reverse tie order).
//  4. Then one replica at a time goes to the candidate below hi with a positive weight and
//     the largest weight/(2s+1), compared exactly as integers (ties: fewer replicas first,
//     then the tie order).
//  5. Replicas that fit nowhere are Plan.Unplaced.
//
// The tie order is names ascending when the Key is "" or its FNV-1a 32-bit hash is even. It is
// descending when the hash is odd. So the odd replica of many objects does not always land on
// the same cluster.
//
// What this buys over KubeFed's planner:
//
//   - Minimums are floors inside one division, not an extra helping before it (KubeFed #319).
//   - Scaling down follows weights too (kubernetes#31816).
//   - The rounding is unbiased. On random weights no cluster lands a whole replica from its
//     exact share R·w/W; KubeFed's ceil-per-round lands tens of replicas off.
//   - The method is house-monotone. With Rebalance off, a total one higher or lower moves
//     exactly one replica, and a plan never moves replicas it does not have to.
//
// Divide does not walk the seats. It estimates a divisor and counts each cluster's seats
// above it exactly: in floating point where the rounding cannot change the count, else
// products in 128 bits, so weights and replicas up to 2^63 compare exactly. It moves the
// divisor with a few more counting passes. Then it gives or takes the last few seats with a
// bounded selection, a heap of the few clusters that can take part. The cost is O(C log C)
// for C clusters, whatever the number of replicas. The pass that reads each cluster and its
// preference also does steps 2 and 3 as if every minimum and running replica fits, which
// they usually do: a total one above what runs is then that pass, one scan for the next
// seat, and the plan's map. The package tests keep the seat-by-seat definition, and check
// both agree on thousands of random requests and under fuzzing.
//
// # KubeFed
//
// federation.AlgorithmKubeFed reproduces KubeFed's planner bit for bit: the same FNV-1 hash
// order, the same rounds, the same overflow. So a KubeFed user can switch to fedkit without
// one replica moving, then switch to Webster when ready. It computes the same plan faster
// than KubeFed did: runs of rounds that only drain running replicas are applied at once. It
// refuses with an error the rare request on which KubeFed's rounds would spin for minutes.
//
// # Algorithms and strategies
//
// They are named once, in package federation, as the ReplicaSchedulingPreference's fields
// take them. [Request].Algorithm is an [Algorithm], an alias of federation.Algorithm. So
// [Webster] (the default) is federation.AlgorithmWebster, and [KubeFed] is
// federation.AlgorithmKubeFed. [Request].Strategy is a federation.Strategy:
//
//   - StrategyWeighted uses the preferences' weights.
//   - StrategyCapacityWeighted weighs each cluster by its Capacity, like Karmada's dynamic
//     weights.
//   - StrategyCostOptimized fills the cheapest clusters first.
//   - StrategyDuplicated gives every candidate the whole total.
//
// A Request's [Spread] divides over failure domains first, with a minimum number of domains
// and a maximum skew.
//
// # Capacity
//
// ClusterState.Capacity is how many of the object's replicas a cluster can hold in all, its
// running replicas included. It is a total, never the headroom alone. The loop computes it as
// what fits in the Cluster's status.available, plus the replicas the object runs there
// already. status.available is the room left once every running pod is counted. So a cluster
// that its own replicas fill keeps them, and the schedule does not change as pods start.
// capacity.go says which count of running replicas is used and why. The arithmetic is exact
// for any quantity and saturates instead of wrapping around.
//
// # Rebalancing
//
// With Rebalance on, every division moves running replicas to their weighted share. With it
// off, running replicas stay where they are, minimums excepted: they are floors on every
// division. [Request].Refill gives the clusters below their fair share replicas back. Divide
// reads no clock. The scheduler loop sets Refill once per rebalancePeriod, and keeps the time
// of the last refill in status.schedule.lastRebalanceTime (rebalance.go).
//
// # Graceful eviction
//
// Decide compares the new division with what runs now. A cluster that runs R replicas and
// gets N < R while another cluster gains starts an eviction in status.schedule.evictions.
// Meanwhile the schedule lists it with R (Keep), so sync keeps them running. The gaining
// clusters are listed with their new counts, so the sum exceeds the total for a while.
// The next division starts from N (the eviction's Replicas), not from R.
//
// The eviction ends when every other scheduled cluster reports, with fresh data, its count
// available. An override of a cluster's replicas, by name or by selector, sets that count,
// as the renderer reads it (override.ReplicasOverride). Under spec.retainReplicas each
// member's autoscaler owns its count: a cluster whose copy is Ready counts as well.
// Fresh means not stale, observed after the eviction began, at the revision sync rendered.
// An entry the collector judges Ready counts too: it moves lastObserved only when it writes.
// It also ends at its deadline (the grace period), or when the cluster gets R again.
// Decision.RequeueAfter asks to look again at the deadline. Events record each start and end.
// An ended eviction covers only its own loss, down to N. If the cluster's target is lower by
// then, the rest is a new loss, with a new eviction that keeps N.
//
// Sync removes nothing from a cluster that is not Ready or that it cannot reach. So an
// eviction of such a cluster does not end, whatever its replacements or its deadline: the
// schedule keeps listing the copy, and the message says it waits for the cluster. A grace
// period that runs out meanwhile leaves the eviction with no deadline. When the cluster is
// back, a new grace period begins, and the replacements are checked again, with fresh data,
// before the copy goes: they may have gone meanwhile (a cluster removed, another partition).
// Out of reach means the Cluster is not Ready, or the object's status.clusters entry there is
// stale or says ClusterUnreachable or ClusterNotReady. An eviction can still end before a
// partition shows. Sync's delete there then fails, and the entry says ClusterUnreachable with
// the copy's last replicas: the eviction begins again and is held the same way.
//
// A copy being deleted is going, not running: sync lists its cluster in status.clusters, with
// propagation WaitingForRemoval, until its finalizers let it go. Its replicas count nowhere,
// so no eviction begins for it and the schedule never lists its cluster again for it.
//
// A total that is lowered, with nobody gaining, is no eviction: it happens at once.
//
// Never into nothing, for every workload. Replicas that fit nowhere else (Plan.Unplaced)
// stay where they run, with no deadline. A workload without a preference (every cluster runs
// the template's replicas) that no cluster can get keeps its copies in the clusters left out
// for their own state (a taint, readiness, application failover), with no deadline: draining
// the only cluster it runs in never deletes its only copy. A cluster the object's own
// placement no longer names loses its copy: that is its author's word. The Scheduled
// condition is then Unschedulable, and its message names each other cluster and why it
// cannot take them. When another cluster does get the workload, the drained cluster's copy
// waits for it to report its replicas available, as for a divided workload.
//
// The settings are federation.EffectiveFailover's: spec.placement.failover, else the
// preference's, else Graciously with 600 seconds. Immediately moves replicas at once (but
// never out of a cluster lost in a fleet disruption, below).
// Never ends the eviction with Release: sync releases the copy instead of deleting it.
// The scheduler drops that entry once status.clusters no longer lists the cluster.
//
// A cluster that left the schedule does not win its leftover replicas back by stickiness.
// When it recovers, only the rebalance rules give it replicas (see Rebalancing).
//
// An eviction is in one of three states, federation.EvictionState, which Eviction.State
// reads from its fields. Waiting has a deadline. Held has none: its grace period ended while
// its cluster was out of reach. Released ended under purge mode Never. Each pass takes every
// cluster one step, with one function per transition (evict.go): begin, wait, holdUntilBack,
// resume, release, stayReleased and end. An eviction that ends leaves the schedule (Ended).
// Sync, dependencies and preview read the state, not the fields. The story
// testdata/stories/evictions.txt walks every transition.
//
// # Where the object runs, and where it cannot
//
// A NoSchedule taint keeps the clusters the object runs in. The object runs in a cluster
// when its status.clusters entry shows a copy there (a revision sync wrote, or replicas or a
// revision the collector saw), or when the previous schedule lists the cluster and
// status.clusters has no entry for it yet. An entry sync wrote for a cluster it could not
// write in, with no copy there, does not count. So a new object's cluster lost before sync
// created it there gets no replicas under its NoSchedule taint, and no eviction waits on it.
//
// A cluster where sync cannot write the object takes no new replicas. Its status entry's
// propagation reason says so (federation.PropagationBlocked: an object of the same name that
// is not the federation's, a refused write, the cluster out of reach). Its capacity is what
// the object runs there. The first division may give it replicas before sync has tried; the
// next takes them back, and the evictions that waited on it end with the losing clusters
// keeping their replicas. The Scheduled message names such clusters. A cluster kept under its
// not-ready taint takes no new replicas either: it is not Ready, so sync cannot write there,
// even before its status entry says so.
//
// # A fleet disruption
//
// When every cluster, or a large share of the fleet, is lost together, the likeliest cause
// is the control plane's own outage, not the fleet's. placement.FleetDisruption decides it,
// with [Options].Disruption ([Input].Disruption for Decide). By default the fleet is
// disrupted when every cluster is lost, or at least 55% of it and 3 clusters within 5
// minutes of one another. Meanwhile a lost cluster keeps its replicas and gets no new ones:
// the not-ready taint placement implies for it is NoSchedule, and the cluster monitor keeps
// its own taints NoSchedule (package status). Its schedule is at least what it runs, whatever
// the division gives it (a total cut meanwhile, a change sync had not carried out before
// the outage), and no eviction of it begins, whatever the purge mode; one decided before
// goes on. The Scheduled message says so. The clusters back within the window count with
// the lost ones. So when contact returns cluster by cluster, nothing moves while the others
// come back. Give the monitor and the scheduler the same options; package controlplane does.
//
// # Unplaced replicas and overflow
//
// Plan.Unplaced counts the replicas that no candidate can take: all are at maxReplicas or
// capacity, or there is no candidate at all. They are never dropped silently. With
// Duplicated, Unplaced is what capacity cut from the clusters' copies. Plan.Overflow says
// where they would go if capacity grew. With Webster, that is the unplaced replicas divided
// among the clusters that capacity (not maxReplicas) held back. With KubeFed, it is KubeFed's
// own overflow map.
//
// # Building a request
//
// [RequestFor] takes a ReplicaSchedulingPreference's total, rebalance flag, preferences,
// algorithm and strategy. The caller adds each cluster's Current (the replicas the object
// runs there), Capacity, Cost and Domain, and the Spread.
//
// Spread constraints are package placement's. [placement.Evaluate] selects the clusters over
// the groups. Its Decision returns the constraint the replicas must honour: ReplicaSpread,
// whose minGroups and maxSkew become Spread's MinDomains and MaxSkew. It also returns each
// selected cluster's group (Candidate.Domain, which becomes ClusterState.Domain). This
// package never reads a spread constraint or computes a group. A request that cannot be
// planned returns an error wrapping [ErrInvalidRequest] that names each bad field.
//
// # The loop's decision as a function
//
// [Decide] is everything [Scheduler.Reconcile] decides, from plain values. Its input is the
// federated object, its ReplicaSchedulingPreference as stored (or nil), the Clusters, the
// schedule written before (or nil) and the time. It does what the loop does:
//
//   - it validates the placement, and defaults and validates the preference;
//   - it applies KubeFed's rule that a preference ignores the placement's clusters and
//     selector unless spec.intersectWithClusterSelector (below);
//   - it estimates each cluster's capacity (headroom plus what the object runs there);
//   - it finds the warnings below ([Decision].Warnings: unknown cluster names, a placement
//     set aside).
//
// It returns the schedule, the Scheduled condition (whose message ends with the warnings)
// and the requeue that Reconcile writes. Reconcile is "read, Decide, write". So a strategy
// test or a preview that calls Decide cannot disagree with the loop. There is no need to call
// federation.DefaultReplicaSchedulingPreference first. With Input.Fresh it answers "why
// would it place this now?", ignoring the previous schedule. [Scheduler.ExplainFresh] does
// that on the host's objects.
//
// With [Options].StatusWriter the write goes to that shared writer, merged with sync's and
// the collector's writes to the object. A type without replicas costs no write of its own.
//
// # Application failover
//
// With spec.placement.failover.application (or the preference's failover), a Ready cluster
// where the workload has been unhealthy for toleranceSeconds is left out. The Collector's
// status.clusters[].unhealthySince says since when, from fresh data only. Unhealthy is
// not Ready and not progressing: a Deployment whose rollout progresses within its
// progressDeadlineSeconds with its availability held is healthy; only a stalled or failing
// one counts toward toleranceSeconds. The diagnosis rule is placement.ApplicationFailure.
// The cluster is then avoided for backoffSeconds (status.schedule.avoided), and
// Decision.RequeueAfter asks to look again then. It never
// leaves an object without a cluster; the message then says so. A Warning event
// (ApplicationFailover) records each move. The stages and timers table is in package status.
//
// # Which clusters a preference chooses from (KubeFed's rule)
//
// The Scheduler loop keeps KubeFed's rule. A ReplicaSchedulingPreference chooses among every
// cluster it covers: its own entries, or all of them with "*". The object's
// spec.placement.clusters and clusterSelector are set aside. The exception is a preference
// with spec.intersectWithClusterSelector: true, which keeps only the clusters the placement
// selects. The placement's other rules apply either way: excludeClusters, affinity, taints
// and readiness, spread, maxClusters. Decide passes placement the clusters the object runs
// in (its previous schedule and status.clusters, but for a copy being deleted), so a
// NoSchedule taint keeps them. So this
// object, meant for the US only, gets replicas in every cluster:
//
//	kind: FederatedDeployment
//	spec:
//	  placement: {clusterSelector: {matchLabels: {topology.kubernetes.io/region: us-east-1}}}
//	---
//	kind: ReplicaSchedulingPreference
//	spec: {totalReplicas: 6, clusters: {"*": {weight: 1}}}   # add intersectWithClusterSelector: true
//
// The Scheduled message says when that happens, that is, when the placement alone would have
// left out a cluster that got replicas. It names the clusters: "note:
// spec.placement.clusterSelector was ignored (it would leave out eu, ap): a
// ReplicaSchedulingPreference chooses among every cluster unless its
// spec.intersectWithClusterSelector is true (KubeFed's rule)". [Decision].Warnings holds it
// as a [Warning] with reason [WarningPlacementIgnored], the field and the clusters.
//
// # Cluster names that do not exist
//
// A name that no Cluster on the host has is skipped, as in KubeFed: a typo, or a cluster not
// joined yet. This holds for a name in spec.placement.clusters and for a key of the
// preference's spec.clusters. The other clusters are scheduled and the condition stays
// Scheduled=True. Its message warns, naming the field: "warning: spec.placement.clusters
// names no Cluster "gpc-eu-west" (a typo, or a cluster not joined yet?): nothing is placed
// there". That is a [Warning] with reason [WarningUnknownCluster] in [Decision].Warnings.
//
// With [Options].RejectUnknownClusters the name is an error instead: Scheduled=False with
// reason [ReasonUnknownCluster] and the field path. The last good schedule is kept until a
// Cluster of that name appears.
//
// # Explaining a plan
//
// [Plan.Clusters] returns an [Allocation] per cluster, and [Plan.Cluster] one by name. An
// Allocation says how many replicas came from its minimum, from keeping running replicas,
// and from its weight. It says which bound held it back: maxReplicas, capacity, domain skew.
// [Allocation.Explain] says it in a line. [Plan.Summary] says the whole plan in one line for
// the Scheduled condition. [Plan.Schedule] is the status.schedule to write. A plan keeps
// these reasons in a compact form and builds the Allocations only when asked. So a caller
// that reads only Plan.Replicas does not pay for them.
//
// # Options
//
// Every default of [Options] is a Default* constant. New refuses invalid Options with an
// error wrapping [ErrInvalidOptions] that names the field.
package scheduler
