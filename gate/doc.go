// Package gate is the one door every destructive write of fedkit goes through: a delete, an
// update that takes over an object no federation manages (Adopt), an orphaning that takes
// the federation's labels off (Orphan), a Secret placed in a member (Place).
//
//	g := gate.New(gate.Options{ControlPlaneNamespace: "fedkit-system", Invariants: mine})
//	w := gate.Write{Verb: gate.Delete, Cluster: "eu", Resource: gvr, Object: live,
//		Evidence: gate.Evidence{Mark: gate.ManagedBy(identity), OwnerDeleted: true}}
//	if r := g.Check(w); r != nil { ... }        // pure: what preview shows
//	err := g.Delete(ctx, client, w, opts)       // Check, then the one call that deletes
//
// A driver (sync, propagation, dependencies, dnsrecord, autoscale) decides a write and hands
// the gate the object as read and the [Evidence] it decided on; the gate checks the write
// against its invariants and sends it only when every one keeps it. The drivers may decide
// the same rules first (sync/plan never plans a delete in kube-system); the gate is the last
// check before the call, where the rules are stated once. The built-in invariants
// ([Builtin]), by name:
//
//   - ours: only an object carrying the federation's mark ([Mark]: its label, an owner
//     reference), or explicitly adopted, is deleted, orphaned or taken over.
//   - reserved-namespace: nothing in kube-system, kube-public, kube-node-lease or the control
//     plane's own namespace is deleted or taken over, and none of those namespaces (nor
//     default) is deleted; the control plane's bookkeeping on the host (its Leases, sync's
//     ControllerRevisions) is the exception.
//   - claim: a PersistentVolumeClaim leaves a cluster only on its owner's deletion, or when
//     its owner asks for it (federation.ClaimRemovalAnnotation: Delete).
//   - last-running-copy: a member workload that runs available replicas is deleted only once
//     a replacement is available in another cluster, the user deleted the workload, or its
//     placement places it nowhere.
//   - namespace-empty: a Namespace is deleted only when shown to hold nothing it must keep
//     (Evidence.NamespaceEmpty says what sync shows).
//   - secret-placement: a Secret goes only into a cluster its own placement places it in.
//
// An embedder adds invariants of its own ([Options].Invariants; controlplane.Options
// Invariants gives them to every loop). A [Refusal] names the object, the cluster and the
// invariant and wraps [ErrRefused]; the drivers record it as an event (reason
// [ReasonRefused]) and sync as its Propagated condition, and look at the object again after
// [RecheckAfter], never in a hot loop. Check is pure; Delete, Update and Create call only
// the client they are given (and read the object's Namespace for an embedder's invariants).
package gate
