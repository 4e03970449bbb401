// Package placement decides which member clusters a federated object goes to.
//
//	names, err := placement.Select(obj.Spec.Placement, clusters)
//
//	d, err := placement.Evaluate(obj.Spec.Placement, clusters)
//	for _, c := range d.Selected {
//		fmt.Println(c.Name, c.Score)
//	}
//	why, _ := d.Why("gpu-us-east") // the rule and the value that left it out
//	fmt.Println(d.Summary())
//
// It is pure. [Place], [Select] and [Evaluate] look only at their arguments: the object's
// spec.placement and the Cluster objects. They do no I/O, read no clock and keep no state. So
// a placement strategy can be unit-tested with a slice of Clusters built in the test.
//
// # Membership: the KubeFed rules
//
// When spec.placement.clusters is present, even empty, it is the candidate list. Names that
// match no Cluster are dropped and reported in [Decision.Unknown], and the clusterSelector
// is ignored. When it is absent, the clusterSelector decides: nil selects nothing, {}
// selects every cluster. `clusters: []` and an absent `clusters` stay distinct through JSON,
// deep copy and unstructured conversion (see package federation).
//
// A selector means what metav1.LabelSelectorAsSelector makes of it. That is the same as for
// the cluster selectors of overrides (package override) and in validation. An invalid one is
// an error wrapping [ErrInvalidPlacement] that names the bad part, never a silent match or
// mismatch: a key that is not a qualified name, In without values, and so on.
//
// The scheduler loop keeps another KubeFed rule on top of these. A
// ReplicaSchedulingPreference without intersectWithClusterSelector sets the object's
// clusters and clusterSelector aside. [package scheduler] explains it.
//
// # Narrowing and ordering
//
// The other fields of [federation.Placement] narrow the candidates and order them:
//
//   - excludeClusters;
//   - required and preferred region/zone affinity;
//   - cluster taints against the placement's tolerations;
//   - readiness, below;
//   - spread constraints over a topology key (region, zone, provider or any Cluster label)
//     with minGroups and maxGroups;
//   - maxClusters.
//
// [Place] documents each rule and the order they apply in.
//
// # Failover: NoSchedule and NoExecute
//
// [Place] knows where the object runs ([Input].Running) and the time ([Input].Now). A
// NoSchedule taint refuses new placements only: a cluster the object runs in stays, and
// [Decision.Kept] says why. A NoExecute taint takes the work away unless tolerated. A
// toleration with tolerationSeconds holds until the taint's timeAdded plus those seconds.
// [Decision.Recheck] says when to look again. [Select] and [Evaluate] know neither, so both
// effects leave a cluster out there. The stages and their timers are in one table, in
// package status ("Failover stages and their timers").
//
// Readiness is a taint. A cluster whose Ready condition is not True carries the
// federation.k8s.io/not-ready:NoExecute taint. The cluster monitor sets it, or this package
// implies it. So a toleration for it keeps the cluster. [package status] says when the
// monitor sets which taint.
//
// # A fleet disruption
//
// Every cluster lost, or a large share of the fleet lost within a short window, is the
// control plane's own outage, not the fleet's. [FleetDisruption] is that rule, as a pure
// function of the Clusters and the time: the cluster monitor, the scheduler and preview all
// call it. A cluster is lost when its Ready condition is False. The fleet is disrupted when
// every cluster is lost, or when at least [DisruptionOptions].Threshold of it (55%) and at
// least three clusters were lost within Window (5 minutes) of one another. The clusters back
// within the window (their Failover condition Recovered) count with the lost ones, so a
// disruption ends only once enough of them have been back for the window. A Ready cluster the
// monitor has not reached within the window (status.lastHeartbeatTime) is not counted: after
// the control plane's own outage its Ready is old news, and the first clusters the monitor
// finds lost are judged among those it has reached since. While the fleet is
// disrupted ([Input].Disruption), the not-ready taint this package implies for a lost cluster
// is NoSchedule: the object keeps what runs there and gets nothing new there.
//
// The result is in rank order: fewer untolerated PreferNoSchedule taints first, then a
// higher preferred-affinity score, then name ascending. The same input always gives the same
// order.
//
// # Asking why
//
// [Evaluate] returns a [Decision]: the selected [Candidate]s with their scores. It also holds
// a [Diagnosis] (rule and value) for every cluster left out. So "why not cluster X" has an
// answer ([Decision.Why]). The scheduler loop puts [Decision.Summary] in the Scheduled
// condition's message.
//
// [Decision.Require] adds the clusters a dependency's workloads run in (package
// dependencies). The scheduler and sync both call it, so they agree. An explicit exclusion
// wins over that need: a cluster the placement excludes (excludeClusters,
// clusterAffinity.required, a taint it does not tolerate) stays out. [Refused] names those
// clusters, for the workloads' condition.
//
// # Spread constraints
//
// Every spread constraint groups the clusters by a topology key ([Domain]: region, zone,
// provider or a Cluster label). Its minGroups and maxGroups act on the selection, all
// constraints together. [Evaluate] finds clusters that cover at least minGroups and at most
// maxGroups groups of every key within maxClusters, whenever such a selection exists. It
// prefers the best-ranked clusters: the greedy choice when it works, else a bounded search,
// documented in choose.go. When none exists it returns [ErrUnsatisfiable] with the best
// effort.
//
// The search examines at most 2^20 classes of interchangeable clusters (tens of
// milliseconds); realistic constraints settle in a few hundred. Past the bound it stops with
// ErrUnsatisfiable and the greedy best effort. Its message says the bound was reached, so a
// selection may still exist.
//
// # Replicas
//
// Placement picks clusters; package scheduler divides replicas among them. Spread
// constraints have one owner, this package. The one constraint that sets maxSkew also
// spreads replicas. Federation validation allows at most one, since replicas are divided
// over one key. [Decision].ReplicaSpread says so, with its minGroups and maxSkew. Every
// selected [Candidate] carries its group for that key in Domain. The scheduler turns that
// into its Spread and the clusters' domains. It never reads spread constraints or computes a
// group itself. So clusters and replicas are spread over the same groups by construction.
//
// [package scheduler]: https://pkg.go.dev/github.com/fedkit/fedkit/scheduler
// [package status]: https://pkg.go.dev/github.com/fedkit/fedkit/status
package placement
