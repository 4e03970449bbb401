// Package conformance is one table of behaviours that every federation.ClusterClient must have.
//
//	func TestFakeConformance(t *testing.T) {
//		conformance.Run(t, conformance.Config{
//			NewClient: func(t *testing.T) federation.ClusterClient { return fake.NewHost("conformance") },
//			Skip:      map[string]string{}, // behaviour name -> why this client lacks it
//		})
//	}
//
// fedkit's loops rely on these behaviours. The real client on a kube-apiserver
// (federation/kube) and the in-memory fake (package fake) both run the table. So a loop
// tested against the fake behaves the same against a real cluster.
//
// Each behaviour is written from what a real kube-apiserver does, and checked against one in
// test/conformance. An implementation may not model a behaviour, or not yet. Then its caller
// lists it in Config.Skip with the reason, and the subtest skips with that reason. So every
// known difference stays visible in `go test -v` output instead of being silently absent.
//
// The behaviours use three resources:
//
//   - core/v1 ConfigMaps: no status, no generation;
//   - apps/v1 Deployments: status subresource, generation with a per-kind rule;
//   - fedkit's Cluster CRD: cluster-scoped, status subresource, the custom-resource rules.
//
// The per-kind rules of a few other built-ins (DaemonSets, EndpointSlices, Leases,
// PriorityClasses, Secrets) have behaviours of their own. The stored ones check what a server makes
// of a built-in object: quantities canonical, empty fields dropped. Others create CRDs of
// their own, and namespaces, to check what is served and the namespace lifecycle.
//
// Namespaced objects go in a fresh namespace per run. Cluster-scoped ones, CRDs included,
// carry the run's suffix. So a shared API server can run the suite more than once. Where a
// real server's controllers act a moment later (establishing or deleting a CRD), a behaviour
// polls for the outcome.
package conformance
