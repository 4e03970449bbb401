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
// # The decision: package autoscale/recommend
//
// The decision is pure and lives in package autoscale/recommend, as sync's
// lives in sync/plan: [recommend.Recommend] (kube's replica calculator over the fleet's
// fresh members, with status's freshness and quorum rules), [recommend.Stabilize] (the
// behavior's windows and policies) and [recommend.Decide], which puts both together and
// which this loop and package preview call. It links no loop, client or Prometheus. The
// names above ([Decide], [Sample], [History]...) are the same types and functions, kept
// here where users first found them. [SplitBounds] stays here: it is pure, but it is the
// scheduler's division, and the scheduler is a loop.
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
// division, so the members' bounds add up to the fleet's where the preference allows. The
// loop writes each member's HPA (labelled federation.ManagedByLabel, annotated
// federation.AutoscalerAnnotation with the preference's uid) and shows the sum of what the
// members run in status.autoscale. It never fights them:
//
//   - no HPA is written until the federated object keeps its members' replicas
//     (spec.retainReplicas): sync would otherwise undo what the HPAs do;
//   - an HPA that cannot compute its metrics (ScalingActive False, desired 0) is shown at
//     what its member runs, never 0;
//   - an HPA of the workload's name that is not the autoscaler's is left alone, and said so;
//   - back in Central mode, or without spec.autoscale, the autoscaler's HPAs are deleted
//     (with their uid and resourceVersion as preconditions), and nothing else.
//
// # The loop
//
//	a, err := autoscale.New(host, clusters, autoscale.Options{Clock: clk, Events: rec})
//	go a.Run(ctx) // or a.Reconcile(ctx, key) from your own queue
//
// [Autoscaler.Reconcile] is one pass over one preference: it reads the preference, its
// federated object (the clusters status.schedule gives replicas) and the Clusters, samples
// each member through a [MetricsSource] (each read bounded by Options.ReadTimeout on the
// injected clock), calls [Decide] and writes status.autoscale when it changed, locked on
// the resourceVersion read. A changed total is recorded as a SuccessfulRescale Event with
// the explanation; a total that cannot be computed as a Warning, once per reason. The
// scheduler, which watches preferences, divides the new total at once. Options.ResyncPeriod
// (15 seconds, an HPA's) paces the passes. The loop remembers each preference's recent
// recommendations and each member's last good sample; a member that does not answer counts
// with its last sample until that is older than Options.StaleAfter.
//
// # Sources
//
// [Members] is the source of push members: their metrics APIs through their
// ClusterClients (metrics.k8s.io PodMetrics, custom.metrics.k8s.io through
// federation.CustomMetricsGetter, external.metrics.k8s.io), as an HPA's controller reads its
// own cluster. [Reports] is the source of pull members, which the hub never reaches: their
// agent (package agent) reads the workload's pods and their usage from the member and adds
// them to the report of the workload's Assignment (status.metrics); Reports reads them
// there. A report is as fresh as the agent's read, so an agent cut off from the host goes
// stale and the quorum rule leaves its cluster out. Agents report Resource and
// ContainerResource metrics; other metrics are Failed for pull members (their shares hold).
// The default source, [ByMode], asks each cluster's source by its spec.mode. Distributed
// mode writes member HPAs through push members' clients only.
package autoscale
