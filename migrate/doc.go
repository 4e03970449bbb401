// Package migrate converts KubeFed v0.10 objects into fedkit's.
//
//	objs, err := migrate.Decode(os.Stdin) // kubectl get kubefedclusters,... -o yaml
//	res := migrate.Convert(objs, migrate.Options{})
//	for _, w := range res.Warnings { fmt.Fprintln(os.Stderr, w) }
//	if len(res.Losses()) > 0 { return errors.New("something would be left out") }
//	out, err := res.YAML()
//
// It reads KubeFedCluster, FederatedTypeConfig, ReplicaSchedulingPreference and
// Federated<Kind> objects as unstructured input and returns fedkit objects.
//
// Every function is pure: no client, no clock. What does not carry over is a Warning.
//
// # What goes where
//
// Objects that are not KubeFed's (a Namespace shipped beside its FederatedNamespace, a plain
// Deployment) pass through unchanged, so a stream of KubeFed's samples applies as a whole.
//
// A Secret a KubeFedCluster names is converted with it. The other Secrets of KubeFed's
// namespace are KubeFed's own; they are left out and stay where they are.
//
// A KubeFed object fedkit has no counterpart for is a loss that names it. So is a
// Federated<Kind> whose type the host does not serve (FederatedClusterRole): fedkit's
// built-in types, and Options.Types, are served.
//
// A Warning with Loss set says the output lacks something the input asked for: an object or
// a field. `kubectl fed migrate` writes nothing and exits 1 on a loss, unless --allow-loss.
// The other warnings lose nothing: KubeFed's bookkeeping that fedkit recomputes (status, its
// finalizer), a name that changes.
//
// # Preferences
//
// A converted preference uses the KubeFed algorithm, so fedkit keeps KubeFed's schedule.
//
// Minimums are always written out: fedkit's default of 1 never changes a KubeFed plan.
//
// # Federated objects
//
// kubefed.io/orphan becomes federation.OrphanAnnotation: both leave the member objects in
// place when the federated object is deleted.
//
// Every converted federated object carries federation.MigratedFromAnnotation: "kubefed".
// Sync then adopts the member objects KubeFed made for it, those labelled
// kubefed.io/managed: "true", and nothing broader. It updates them in place: a cut-over
// deletes and creates nothing.
//
// An Ingress template in KubeFed's extensions/v1beta1 form (serviceName, servicePort) is
// converted to networking.k8s.io/v1, fedkit's Ingress type.
//
// A template field the built-in target type does not have is a loss: a member's API server
// would drop it (federation.UnknownFields).
//
// README.md lists what carries over and what does not, and how to cut over.
package migrate
