// Package preview answers "what will this do?" before a change is applied: a dry run of the
// whole federation pipeline, as a library call, that touches no cluster.
//
//	in, err := preview.Decode(yamlBytes) // federated objects, Clusters, preferences, DNS
//	in.Now = time.Now()
//	rep, err := preview.Run(in)
//	for _, o := range rep.Objects { ... o.Clusters, o.Problems ... }
//
// Decode is strict: an unknown field or a duplicate key is an error naming document, line and
// field. Plain objects (Namespaces) are kept in Input.Other, so one fixture feeds fake.Apply too.
//
// For each federated object the [Report] says which clusters it goes to and why each other
// cluster was left out (the placement rule and the value that failed it), how many replicas
// each cluster gets and how the count came about, the member object sync would write to
// each cluster, the DNS names of its ServiceDNSRecord or IngressDNSRecord, and every
// validation error with its field path. Given the member objects as they are now
// ([Input].Live, read from a federation.ClusterSet or from kubeconfig contexts), it also says
// what sync would change in each cluster: create, update (with the owned fields that differ,
// live value and desired value), delete, or nothing, and why a cluster cannot be brought in
// line (an object of the same name that the federation does not manage, an override that
// cannot be rendered, a cluster that is not ready).
//
// For an object with spec.rollout, [Object].Rollout says which clusters a new revision
// changes in which stage, what each stage waits for, whether autoRollback is on and the
// rollout paused, whether this revision goes stage by stage at all (an object's first
// revision goes everywhere at once), and status.rollout as the object carries it.
//
// # The loops' own decisions
//
// A preview that reimplemented the loops would drift from them. Run calls the functions the
// loops call, so it cannot:
//
//   - scheduler.Decide is the whole decision of the Scheduler's Reconcile (placement with a
//     ReplicaSchedulingPreference, its defaulting, the capacity estimate, the Scheduled
//     condition); Reconcile reads its inputs, calls it and writes the result;
//   - sync.Plan is the whole decision of the Syncer's Reconcile: the Syncer reads the
//     object, its history and the member objects, calls it and carries out its Decision:
//     where the object goes, the rollout's stages over the placed clusters, the change per
//     cluster; sync.OwnedDiff is the comparison it detects drift with;
//   - sync.StableRevisionOf says, from the object's status, whether a revision is staged
//     (a preview has no history, so Plan holds no cluster back);
//   - override renders the member objects, and dnsrecord computes the names and records.
//
// It previews a control plane that runs the scheduler, so sync waits for its schedule
// (sync.PlanInput.WaitForScheduler, as package controlplane sets it): an object the scheduler
// refuses (an invalid ReplicaSchedulingPreference, say) is written nowhere, and with live
// objects every cluster shows no change with reason NotScheduled.
//
// Since the loops call the same functions, no test needs to keep two copies of a rule in
// step.
//
// # What it cannot know
//
// A preview sees what it is given. The revision sync records is inferred from the object
// (its revision annotation, plus one when its generation moved past status.observedGeneration);
// the DNS load balancers are taken from the live member objects, by the DNS loop's own
// rules but without its check that ready endpoints stand behind a Service (a preview has no
// EndpointSlices); load balancers known only by a hostname are not resolved (no I/O).
// Clusters are decided on the status they carry, so a Cluster written by hand without a
// Ready condition counts as not ready unless [Input].AssumeReady.
//
// Nor does it read the revision history. It says a revision after a synced one goes stage
// by stage, which sync does unless the revision renders as the stable one (a change of
// placement alone goes everywhere at once). And while a rollout is under way, a cluster
// that sync still holds at the stable revision shows the change the new revision makes
// there, which sync makes when its stage starts, not now.
//
// # Traps it points out
//
// Besides errors, a Report carries warnings for input the loops accept but which probably
// does not mean what it says. The scheduler's own (scheduler.Decision.Warnings, which its
// Scheduled message ends with): a name in spec.placement.clusters or among the preference's
// spec.clusters that no Cluster has; a ReplicaSchedulingPreference that, by KubeFed's rule,
// ignores the object's placement unless spec.intersectWithClusterSelector is true, and so
// places it in clusters the placement would leave out. And the preview's: an override that
// replaces the replica count the preference scheduled; a preference or DNS record with no
// object to apply to. An override that cannot
// apply to some cluster (a path that does not exist there) is found by override.Validate,
// the check an admission webhook runs: it renders the object for every Cluster, not only
// those it is placed in now, and for every cluster an override names.
//
// A member object the member's API server would refuse on every create (a Deployment
// without a selector matching its pod labels, a container without an image, a Job without
// restartPolicy) is an error naming the template field and the cluster. It is sync.Plan's
// InvalidMember decision (federation.ValidateMember), the one the Syncer makes. An object
// placed in no cluster is a warning. [Report.Check] turns a report into a CI verdict: an
// error for errors, and with strict for warnings too.
//
// go run ./examples/preview prints a Report as tables and YAML (or JSON with -o json).
package preview
