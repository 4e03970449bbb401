// Package placement decides which member clusters a federated object goes to.
//
// It is pure: [Place], [Select] and [Evaluate] look only at their arguments (the object's
// spec.placement and the Cluster objects) and do no I/O, read no clock and keep no state, so a
// placement strategy can be unit-tested with a slice of Clusters built in the test.
//
//	names, err := placement.Select(obj.Spec.Placement, clusters)
//
// # Membership: the KubeFed rules
//
// When spec.placement.clusters is present, even empty, it is the candidate list: names that
// match no Cluster are dropped (and reported in [Decision.Unknown]) and the clusterSelector is
// ignored. When it is absent, the clusterSelector decides: nil selects nothing, {} selects
// every cluster. A selector means what metav1.LabelSelectorAsSelector makes of it, exactly
// as for the cluster selectors of overrides (package override) and in validation: an
// invalid one (a key that is not a qualified name, In without values, ...) is an error
// wrapping [ErrInvalidPlacement] that names the bad part, never a silent match or mismatch. `clusters: []` and an absent `clusters` stay distinct through JSON, deep
// copy and unstructured conversion (see package federation).
//
// The scheduler loop keeps another KubeFed rule on top of these: a ReplicaSchedulingPreference
// without intersectWithClusterSelector chooses among every cluster it covers, and the
// object's clusters and clusterSelector are set aside (the Scheduled condition's message says
// when that changed the result; see package scheduler).
//
// # Narrowing and ordering
//
// The other fields of [federation.Placement] narrow the candidates and order them:
// excludeClusters; required and preferred region/zone affinity; cluster taints against the
// placement's tolerations; readiness (a cluster whose Ready condition is not True carries the
// federation.k8s.io/not-ready:NoExecute taint, set by the cluster monitor or implied here,
// so a toleration for it keeps the cluster); spread constraints over a topology key (region,
// zone, provider or any Cluster label) with minGroups and maxGroups; and maxClusters.
// [Place] documents each rule and the order they apply in.
//
// # Failover: NoSchedule and NoExecute
//
// [Place] knows where the object runs ([Input].Running) and the time ([Input].Now). A
// NoSchedule taint refuses new placements only: a cluster the object runs in stays, and
// [Decision.Kept] says why. A NoExecute taint takes the work away unless tolerated. A
// toleration with tolerationSeconds holds until the taint's timeAdded plus those seconds,
// and [Decision.Recheck] says when to look again. [Select] and [Evaluate] know neither, so
// both effects leave a cluster out there. The stages and their timers are in one table, in
// package status ("Failover stages and their timers").
//
// The result is in rank order: fewer untolerated PreferNoSchedule taints first, then a
// higher preferred-affinity score, then name ascending. The same input always gives the same
// order.
//
// # Asking why
//
// [Evaluate] returns a [Decision]: the selected [Candidate]s with their scores, and a
// [Diagnosis] (rule and value) for every cluster left out, so "why not cluster X" has an
// answer ([Decision.Why]) and the scheduler loop can put [Decision.Summary] in the Scheduled
// condition's message.
//
// # Spread constraints
//
// Every spread constraint groups the clusters by a topology key ([Domain]: region, zone,
// provider or a Cluster label). Its minGroups and maxGroups act on the selection, all
// constraints together: [Evaluate] finds clusters that cover at least minGroups and at most
// maxGroups groups of every key within maxClusters whenever such a selection exists,
// preferring the best-ranked clusters (the greedy choice when it works, else a bounded
// search, documented in choose.go). When none exists it returns [ErrUnsatisfiable] with the
// best effort. The search examines at most 2^20 classes of interchangeable clusters (tens of
// milliseconds); realistic constraints settle in a few hundred. Past the bound it stops with
// ErrUnsatisfiable and the greedy best effort, and its message says the bound was reached, so
// a selection may still exist.
//
// # Replicas
//
// Placement picks clusters; package scheduler divides replicas among them. Spread constraints
// have one owner, this package: the one constraint that sets maxSkew (federation validation
// allows at most one, since replicas are divided over one key) also spreads replicas, and
// [Decision].ReplicaSpread says so, with its minGroups and maxSkew, while every selected
// [Candidate] carries its group for that key in Domain. The scheduler turns that into its
// Spread and the clusters' domains; it never reads spread constraints or computes a group
// itself, so clusters and replicas are spread over the same groups by construction.
package placement
