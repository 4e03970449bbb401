// Package plan is sync's decision: what the Syncer does for one federated object, and what
// its status says afterwards, as pure functions of what a driver read.
//
//	in := plan.Input{Type: federation.DeploymentType, Object: fed, Clusters: clusters,
//		Revision: rev, Now: now, Memory: memory}
//	d, err := plan.Decide(in)          // targets, rollout, rollback; d.Read: the members to read
//	in.Members, in.Decided = read(d.Read), &d
//	d, err = plan.Decide(in)           // d.Changes: what to do in each cluster
//	outcomes := carryOut(d.Changes)    // the driver's writes
//	rep := plan.Report(in, d, outcomes) // rep.Status, rep.Events, rep.RequeueAfter
//
// Package sync's Syncer is the driver, as etcd-io/raft's node drives its RawNode: it reads,
// calls [Decide], carries out the [Decision], hands what came of each write to [Report] and
// writes the [Result]. Package preview calls the same functions on what it is given. Nothing
// here does I/O, reads a clock (Input.Now is the time), logs or keeps state: the same input
// gives the same decision.
//
// # Decide, in steps
//
// A driver calls [Decide] with what the last call asked for, until a Decision asks for
// nothing more:
//
//  1. With Input.Revision 0: whether the pass waits for the scheduler (Decision.Wait, see
//     [Wait]). A pass that waits decides nothing else; one that does not records the
//     revision (the driver keeps the revision history) and decides again.
//  2. With the revision (and Input.History during a staged rollout): where the object goes
//     ([Targets], [TargetsFor]), a staged rollout's step ([DecideRollout]), or a rollback to
//     perform (Decision.Rollback: the driver writes [RolledBack] and nothing else), each
//     cluster's render input key (Decision.Keys), and which member objects to read
//     (Decision.Read). For an object being deleted: which clusters that are not ready may
//     hold its copy (Decision.NotReady, [NotReadyCheck]).
//  3. With Input.Members (and Input.Decided, the last Decision, whose targets and rollout
//     are taken as they are): what to do in each cluster (Decision.Changes, one [Change]
//     each). A FederatedNamespace's member Namespace a change would delete is read first
//     (Decision.ReadNamespaces): the driver sets [MemberState].Namespace and decides again.
//
// After a Conflict the driver reads the member object again and decides again for that
// cluster, with Input.Decided.
//
// # What the driver remembers
//
// A driver remembers, between passes, the version of each member object it wrote or found
// in line with the render, against the render input key ([Verified]). Decide reads that
// through Input.Memory ([Memory]), as raft's RawNode reads its application's Storage: a
// member object still at that version for that key needs neither a render nor a
// comparison, and a driver that knows so may read only its version (MemberState.Version).
// Memory is an optimisation, never a source of truth: a nil Memory decides the same, with
// more work.
//
// # Report
//
// [Report] turns the Decision and the driver's [Outcome]s into sync's part of the status
// (status.clusters[].propagation, message and revision, which clusters the list holds,
// status.syncedRevision, status.observedGeneration, status.rollout, the Propagated and
// RolledBack conditions), the events ([Event]) and when to come back. For an object being
// deleted it also says when the finalizer goes ([Result].Release) and what may be left
// behind. [Stopped] is the Result of a pass that stops on bad input.
//
// # Other rules
//
// What a revision's snapshot holds, how its ControllerRevision is named and what a rollback
// writes back ([Snapshot], [RevisionName], [Restore], [RolledBack]); which member namespace
// sync created and may delete again, and what keeps it ([CreatedNamespace], [Occupant],
// [FederationObjectIn]); whether a newer version of the object or a Cluster still leads to
// the same deletions ([SameDeletions], [SamePlacement]); the owned fields that differ
// ([OwnedDiff]); and every reason and event the status and the events carry (reasons.go,
// events.go). The rules themselves are told as stories in testdata/stories, replayed by
// TestStories.
package plan
