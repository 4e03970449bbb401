// Package autoscale scales a federated workload's total with the load its members report.
//
//	d := autoscale.Decide(autoscale.DecideInput{Input: autoscale.Input{
//		Autoscale: *rsp.Spec.Autoscale, Current: int32(federation.FleetTotal(rsp)),
//		Samples: samples, Now: now, StaleAfter: time.Minute,
//	}, History: history})
//	fmt.Println(d.Message) // 12 -> 22: cpu 91% of 60% over 14 ready pods in 3 of 3 clusters
//
// # The API: a block of the preference, not a kind of its own
//
// Autoscaling is spec.autoscale of a ReplicaSchedulingPreference: the autoscaling/v2 spec of
// an HPA (minReplicas and maxReplicas of the fleet, metrics, behavior). The autoscaler
// writes its total to the preference's status.autoscale.desiredReplicas. The scheduler
// divides that total ([federation.FleetTotal]) with the preference's per-cluster
// minReplicas, maxReplicas and weights, as it divided spec.totalReplicas.
//
// Karmada users know a FederatedHPA kind that points at a workload and rewrites its
// replicas, which its scheduler then divides. fedkit already has the object that holds the
// total and the rules that divide it: the preference. A kind of its own would be a second
// object writing the first one's total, and two objects would have to agree on bounds
// (the fleet's maxReplicas below the sum of the clusters' minReplicas, say). As a block,
// one object holds one total, with one writer for it. The total lives in status, so a
// GitOps tool that owns the preference's spec never fights the autoscaler over it.
// spec.totalReplicas stays the total until the autoscaler's first decision, within the
// fleet's bounds. KubeFed users keep their preferences and add a block.
//
// # The fleet's recommendation
//
// [Recommend] counts the pods of every fresh member as one HPA counts one cluster's: kube's
// replica calculator, its tolerance, its unready and missing pods. Its facts are ported as
// stories (testdata/replicas.txt, one block per case of kube's replica_calculator_test.go).
// Freshness and quorum are status's rules ([status.IsFresh], [status.HasQuorum]). A stale
// member's share holds at what it last ran, so the fleet never scales on data nobody has.
// [Stabilize] applies the behavior (windows, rate policies, kube's facts in
// testdata/behavior.txt). [Decide] puts both together with an HPA's conditions and a
// one-line explanation; the loop and package preview call it.
//
// # Never fights, never harms
//
//   - A stale or partitioned minority is left out: its share holds. Without a majority of
//     fresh members there is no recommendation, and the total holds.
//   - A metric that cannot be computed (a member's metrics API missing, an adapter's error)
//     is never read as 0: its members' shares hold, and a metric a majority cannot report
//     is left out. When none can be computed, or some cannot and the others would scale
//     down, the total holds (reason FailedGetMetrics).
//   - A scale-down never follows a scale-up within the scale-down window (300 seconds by
//     default). Flapping metrics move the total up once and hold it there. After a restart
//     the first scale-down waits one window (History.Since).
//
// # Distributed mode
//
// With mode Distributed every member runs its own HorizontalPodAutoscaler. [SplitBounds]
// divides the fleet's minReplicas and maxReplicas among the members with the scheduler's
// division, so the members' bounds add up to the fleet's where the preference allows.
package autoscale
