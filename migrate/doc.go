// Package migrate converts KubeFed v0.10 objects into fedkit's.
//
//	objs, err := migrate.Decode(os.Stdin) // kubectl get kubefedclusters,... -o yaml
//	res := migrate.Convert(objs, migrate.Options{})
//	for _, w := range res.Warnings { fmt.Fprintln(os.Stderr, w) }
//	out, err := res.YAML()
//
// It reads KubeFedCluster, FederatedTypeConfig, ReplicaSchedulingPreference and
// Federated<Kind> objects as unstructured input and returns fedkit objects.
//
// Every function is pure: no client, no clock. What does not carry over is a Warning.
//
// A converted preference uses the KubeFed algorithm, so fedkit keeps KubeFed's schedule.
//
// Minimums are always written out: fedkit's default of 1 never changes a KubeFed plan.
//
// README.md lists what carries over and what does not.
package migrate
