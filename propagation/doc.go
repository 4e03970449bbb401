// Package propagation federates the objects a team already has. A PropagationPolicy or
// ClusterPropagationPolicy selects native host objects; the [Propagator] writes each one's
// Federated<Kind>, which the other loops handle as usual.
//
//	types := propagation.DefaultTypes(federation.BuiltinTypes())
//	p, err := propagation.New(host, types, propagation.Options{})
//	res, err := p.Reconcile(ctx, federation.Key{Namespace: "shop", Name: "web"})
//	// or: err = p.Run(ctx)
//	m, err := propagation.NewPolicyMonitor(host, types, propagation.Options{}) // the policies' status
//	err = m.Run(ctx)
//
// # Read, decide, act, report
//
// A pass over one native object reads it, its Federated<Kind> and preference, and the
// policies. It hands them to [DecideWrites], the pure decision. That returns the writes: the generated object to
// create, update, mark orphaning or delete, its preference, and the native object's policy
// annotation, restored template and status. The pass sends them in order and puts each
// answer in its Input. A write that needs an answer first (the native object's new
// generation, a created object's uid) comes from the next call. The pass calls again until
// nothing is left, then reports: events on the answers, warnings once per change.
// DecideWrites reads no clock and no client, so a test or a preview calls it with objects in
// hand ([Input], [Writes]).
//
// # Precedence and preemption
//
// [Matches] is the pure rule. Higher spec.priority wins. At equal priority a
// PropagationPolicy beats a ClusterPropagationPolicy. Then a selector by name beats one by
// labels, which beats one by kind only. Then the policy name, ascending.
//
// [Decide] adds preemption, as Karmada has it. A policy never takes over an object another
// policy federates (the one its Federated<Kind> names) unless its spec.preemption is Always
// (default Never). Even then a PropagationPolicy takes it only from a ClusterPropagationPolicy
// or from a PropagationPolicy of lower priority, and a ClusterPropagationPolicy only from a
// ClusterPropagationPolicy of lower priority ([CanPreempt]). An object nobody federates yet
// goes to the best match. Unlike Karmada, a ClusterPropagationPolicy of higher priority
// than a PropagationPolicy also wins an object nobody federates yet.
//
// # What no policy selects
//
// No policy selects objects in kube-system, kube-public and kube-node-lease
// ([federation.SystemNamespace]), whatever its selectors say. Nor in the control plane's own namespace
// (Options.ControlPlaneNamespace, fedkit-system by default). A policy for every Deployment
// would otherwise copy the host's CoreDNS over every member's. Karmada skips its own namespaces
// the same way. The dependencies loop applies the same rule (federation.ReservedNamespace) to
// the workloads whose dependencies it federates. Objects labelled federation.ManagedByLabel are member copies, never
// selected. Secrets labelled federation.SecretClusterLabel hold cluster credentials, never
// selected either. A PropagationPolicy selects in its own namespace: a selector may name
// that namespace, as Karmada's examples do, and no other.
//
// # The generated object
//
// [Generate] is the pure rendering. The native object, without server fields and status,
// is the template. The policy gives placement, overrides, rollout, retainReplicas and
// propagateDependencies. Its conflictResolution Overwrite sets federation.AdoptAnnotation;
// the default, Abort, never takes over a member object the federation does not manage (sync
// reports a conflict). Its removal Delete sets federation.RemovalAnnotation. The object is
// labelled federation.GeneratedByLabel and owned by the native object.
// federation.PolicyAnnotation names the winning policy, on both objects.
// federation.OrphanAnnotation on the native object is copied.
// A policy's spec.scheduling becomes a ReplicaSchedulingPreference of the same name,
// owned by the generated object.
//
// # Deletes
//
// Every delete of the loop (a generated Federated<Kind>, a generated
// ReplicaSchedulingPreference) goes through Options.Gate (package gate), which checks that it
// carries federation.GeneratedByLabel: propagation. A refusal is a Warning (RefusedByGate)
// on the native object; the pass comes back after gate.RecheckAfter.
//
// # What the loop does
//
// It writes only real changes. Of the user's own object it writes only its policy
// annotation (and the template an automated rollback restores, below), by a merge patch
// locked on the resourceVersion it read (never an update of the whole object), and the
// status below. A Federated<Kind> written by hand is never taken
// over: the native object gets a Warning event, and both are left alone. Objects labelled
// federation.ManagedByLabel are member copies, never selected. Credentials are never
// selected either (federation.Credentials, which the dependencies loop applies too): Secrets
// labelled federation.SecretClusterLabel, and service-account token Secrets.
//
// When the native object is deleted, the loop deletes its generated object: a host has no
// garbage collector of its own. Sync then deletes the member copies, unless the native
// object carries federation.OrphanAnnotation.
//
// A policy may be deleted, or an edit (of the policy or of the object's labels) may leave
// no policy selecting the object. Then the member copies stay running, no longer managed.
// The loop marks the generated object federation.OrphanAnnotation, then deletes it (only
// that version of it). Sync then removes fedkit's labels and annotations from the copies and
// leaves them. Their dependencies (spec.propagateDependencies) stay with them: the
// dependencies loop releases them in the same clusters, never deletes them. A policy with
// spec.removal Delete asked otherwise: then its copies are deleted, and their dependencies
// where nothing else needs them.
// Another policy that selects the object later finds unmanaged copies, which it takes over
// only with conflictResolution Overwrite. Karmada keeps such copies running too, but still
// managed: its binding lives as long as the object.
//
// A policy that fedkit's validation refuses never removes what it federated. The CRDs refuse
// at admission what their schema can say: override paths that are not JSON pointers,
// selector names, enums. The API server accepts the rest, such as a label selector operator
// without values, or an override path to the object's name. Such a policy
// selects nothing new. The objects it federates keep their generated object as it is, until
// it is fixed or deleted: [Decide] says Frozen, and the native object gets a PolicyInvalid
// Warning. Karmada refuses invalid policies with its admission webhook instead.
//
// For Deployments, StatefulSets, ReplicaSets and DaemonSets it writes the fleet's replica
// counts into the native object's status, through the status subresource. Its
// observedGeneration follows once the generated object's Ready condition observed the
// matching generation. So kubectl get deploy on the host tells the truth about the fleet.
// When no policy federates the object any more, those fields are cleared ([ClearedStatus]).
// When every cluster has left, they say zero.
//
// The host should run no controller for the native kinds: a kube-controller-manager there
// would run the workloads on the host too, and write their status.
//
// Rolling back a generated Federated<Kind> (fedsync.Rollback, kubectl fed rollback)
// restores the revision's template into the native object, which the policy federates
// again. A revision with other overrides is refused: those are the policy's.
//
// So does sync's automated rollback (spec.rollout.autoRollback), in two steps, each by the
// loop that owns the write. Sync restores the stable revision into the generated object, so
// the fleet runs it at once, and marks it federation.RolledBackAnnotation. This loop then
// restores that template into the native object (a merge patch locked on its
// resourceVersion, with a RolledBack event on it), and renders the generated object again
// from it, without the mark: the rollback lasts, and nothing rolls forward again
// ([RolledBackTemplate]). A native object edited since the failed revision was rendered from
// it is not overwritten: the user's edit is a new revision. Sync itself never writes a native
// object.
//
// # Policy status
//
// The [PolicyMonitor] (one per control plane) writes each policy's status ([PolicyStatus]):
//
//   - Valid: False (InvalidPolicy) names every invalid field and its error, with an
//     InvalidPolicy Warning event on the policy.
//   - Selectable: False (KindNotFederated) names each resource selector that can select
//     nothing the control plane federates: a kind without a type, a misspelt one (with the
//     kind it was perhaps meant to be), another version than the type's, or Secrets, which
//     [DefaultTypes] leaves out ([Unselectable]).
//   - Conflict: True when another policy selects an object this one selects.
//     status.conflicts names each such object, the winner, the loser and why (NotPreempting,
//     LowerPrecedence, CannotPreempt), in both policies' status.
//
// Karmada's policies have no such status.
package propagation
