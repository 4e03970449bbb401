// Package propagation federates the objects a team already has. A PropagationPolicy or
// ClusterPropagationPolicy selects native host objects; the [Propagator] writes each one's
// Federated<Kind>, which the other loops handle as usual.
//
//	types := propagation.DefaultTypes(federation.BuiltinTypes())
//	p, err := propagation.New(host, types, propagation.Options{})
//	res, err := p.Reconcile(ctx, federation.Key{Namespace: "shop", Name: "web"})
//	// or: err = p.Run(ctx)
//
// # Precedence
//
// [Matches] is the pure rule. Higher spec.priority wins. At equal priority a
// PropagationPolicy beats a ClusterPropagationPolicy. Then a selector by name beats one by
// labels, which beats one by kind only. Then the policy name, ascending.
//
// # The generated object
//
// [Generate] is the pure rendering. The native object, without server fields and status,
// is the template. The policy gives placement, overrides, rollout, retainReplicas and
// propagateDependencies. Its conflictResolution Overwrite sets federation.AdoptAnnotation.
// The object is labelled federation.GeneratedByLabel and owned by the native object.
// federation.PolicyAnnotation names the winning policy, on both objects.
// federation.OrphanAnnotation on the native object is copied.
// A policy's spec.scheduling becomes a ReplicaSchedulingPreference of the same name,
// owned by the generated object.
//
// # What the loop does
//
// It writes only real changes. Of the user's own object it writes only its policy
// annotation, by a merge patch locked on the resourceVersion it read (never an update of the
// whole object), and the status below. It deletes the generated object when the native object goes
// or no policy selects it any more: a host has no garbage collector of its own. Sync then
// removes the member copies, or orphans them. A Federated<Kind> written by hand is never
// taken over: the native object gets a Warning event, and both are left alone. Objects
// labelled federation.ManagedByLabel are member copies, never selected. Credentials are never
// selected either (federation.Credentials, which the dependencies loop applies too): Secrets
// labelled federation.SecretClusterLabel, and service-account token Secrets.
//
// The host should run no controller for the native kinds: a kube-controller-manager there
// would run the workloads on the host too, and write their status.
//
// For Deployments, StatefulSets, ReplicaSets and DaemonSets it writes the fleet's replica
// counts into the native object's status, through the status subresource. Its
// observedGeneration follows once the generated object's Ready condition observed the
// matching generation. So kubectl get deploy on the host tells the truth about the fleet.
package propagation
