// Package preview answers "what will this do?" before a change is applied.
//
//	in, err := preview.Decode(yamlBytes) // federated objects, Clusters, preferences, DNS
//	in.Now = time.Now()
//	rep, err := preview.Run(in)
//	for _, o := range rep.Objects { ... o.Clusters, o.Problems ... }
//
// It is a dry run of the whole federation pipeline, as a library call, that touches no
// cluster. Decode is strict: an unknown field or a duplicate key is an error naming
// document, line and field. Plain objects (Namespaces) are kept in Input.Other, so one
// fixture feeds fake.Apply too.
//
// For each federated object the [Report] says these:
//
//   - which clusters it goes to, and why each other cluster was left out (the placement
//     rule and the value that failed it);
//   - how many replicas each cluster gets, and how the count came about, and how many the
//     member object gets once the cluster's overrides apply ([Cluster].MemberReplicas;
//     [Cluster.ReplicasText] shows both when they differ: "4 (scheduled 3)");
//   - the member object sync would write to each cluster;
//   - the DNS names of its ServiceDNSRecord or IngressDNSRecord;
//   - every validation error with its field path.
//
// Native objects in Input.Other that a PropagationPolicy or ClusterPropagationPolicy
// selects are listed in [Report].Natives: the policy chosen, and why the others lost. Their
// generated Federated<Kind> is then previewed like any federated object.
//
// It can also be given the member objects as they are now ([Input].Live, read from a
// federation.ClusterSet or from kubeconfig contexts). Then it also says what sync would
// change in each cluster: create, update (with the owned fields that differ, live value and
// desired value), delete, or nothing. It says why a cluster cannot be brought in line: an
// object of the same name that the federation does not manage, an override that cannot be
// rendered, a cluster that is not ready.
//
// For an object with spec.rollout, [Object].Rollout says which clusters a new revision
// changes in which stage, and what each stage waits for. It says whether autoRollback is on
// and the rollout paused. It says whether this revision goes stage by stage at all: an
// object's first revision goes everywhere at once. It shows status.rollout as the object
// carries it.
//
// # The loops' own decisions
//
// A preview that reimplemented the loops would drift from them. Run calls the functions the
// loops call, so it cannot:
//
//   - scheduler.Decide is the whole decision of the Scheduler's Reconcile: placement with a
//     ReplicaSchedulingPreference, its defaulting, the capacity estimate, the Scheduled
//     condition. Reconcile reads its inputs, calls it and writes the result.
//   - plan.Decide is the whole decision of the Syncer's Reconcile. The Syncer reads the
//     object, its history and the member objects, calls it and carries out its Decision:
//     where the object goes, the rollout's stages over the placed clusters, the change per
//     cluster. sync.OwnedDiff is the comparison it detects drift with.
//   - sync.StableRevisionOf says, from the object's status, whether a revision is staged.
//     (A preview has no history, so Plan holds no cluster back.)
//   - override renders the member objects, and dnsrecord computes the names and records.
//   - recommend.Explain (package autoscale/recommend) is the autoscaler's decision. With the
//     members' samples in Input.Samples, the preview decides the fleet total of a preference
//     with spec.autoscale as the autoscaler would, schedules that total and says why in
//     Object.Autoscale. It links the autoscaler's decision, not its loop.
//
// It previews a control plane that runs the scheduler. So sync waits for its schedule, as
// package controlplane sets it (sync/plan's Input.WaitForScheduler; package sync explains the
// wait). An object the scheduler refuses (an invalid ReplicaSchedulingPreference, say) is
// written nowhere. With live objects, every cluster shows no change with reason
// NotScheduled.
//
// Since the loops call the same functions, no test needs to keep two copies of a rule in
// step.
//
// With live member objects, each cluster's Change says what the gate would refuse
// (Change.Refused), from plan.GateWrite and gate.Check, which the Syncer's writes pass; the
// embedder's own invariants come in Input.Gate.
//
// # What it cannot know
//
// A preview sees what it is given:
//
//   - The revision sync records is inferred from the object: its revision annotation, plus
//     one when its generation moved past status.observedGeneration.
//   - The DNS load balancers are taken from the live member objects, by the DNS loop's own
//     rules. It lacks the loop's check that ready endpoints stand behind a Service: a
//     preview has no EndpointSlices.
//   - Load balancers known only by a hostname are not resolved (no I/O).
//   - Clusters are decided on the status they carry. So a Cluster written by hand without a
//     Ready condition counts as not ready, unless [Input].AssumeReady.
//
// [Input].Down previews a failover: the named clusters are taken as down (not Ready, with
// the not-ready taint at NoExecute). Each [Object].Failover then lists what moves where,
// against status.schedule. It also lists the evictions, each with a state
// (federation.Eviction.State): a copy kept until the replacements are ready or its cluster
// is back, or a copy released.
//
// Preview does not read the revision history either. It says a revision after a synced one goes stage by
// stage. Sync does so unless the revision renders as the stable one: a change of placement
// alone goes everywhere at once. During a rollout, a cluster that sync still holds at the
// stable revision shows the change the new revision makes there. Sync makes that change when
// the cluster's stage starts, not now.
//
// # Traps it points out
//
// Besides errors, a Report carries warnings for input the loops accept but which probably
// does not mean what it says. The scheduler's own warnings are in scheduler.Decision.Warnings,
// which its Scheduled message ends with:
//
//   - a name in spec.placement.clusters or among the preference's spec.clusters that no
//     Cluster has;
//   - a ReplicaSchedulingPreference that ignores the object's placement by KubeFed's rule,
//     unless spec.intersectWithClusterSelector is true, and so places it in clusters the
//     placement would leave out.
//
// The preview's own warnings:
//
//   - an override that replaces the replica count the preference scheduled;
//   - a preference or DNS record with no object to apply to.
//
// An override may not apply to some cluster: a path that does not exist there.
// override.Validate finds it; it is the check an admission webhook runs. It renders the
// object for every Cluster, not only those it is placed in now, and for every cluster an
// override names.
//
// A member object the member's API server would refuse on every create is an error naming
// the template field and the cluster. Examples are a Deployment without a selector matching
// its pod labels, a container without an image, and a Job without restartPolicy. It is
// plan.Decide's InvalidMember decision (federation.ValidateMember), the one the Syncer makes.
// A field the member's type does not have, in any built-in kind (imagePullPolicyy, an
// Ingress's removed serviceName), is a warning naming the template field and each cluster
// sync would write it to: the member's API server drops it. It is plan.Decide's Change.Unknown, which the Syncer
// records in status. An object placed in no
// cluster is a warning. [Report.Check] turns a
// report into a CI verdict: an error for errors, and with strict for warnings too.
//
// go run ./examples/preview prints a Report as tables and YAML (or JSON with -o json).
package preview
