// Package conformance is one table of behaviours that every federation.ClusterClient must
// have, because fedkit's loops rely on them: the real client on a kube-apiserver
// (federation/kube) and the in-memory fake (package fake) both run it, so a loop tested
// against the fake behaves the same against a real cluster.
//
// Each behaviour is written from what a real kube-apiserver does, checked against one in
// test/conformance. Where an implementation cannot or does not yet model a behaviour, its
// caller lists it in Config.Skip with the reason; the subtest then skips with that reason, so
// every known difference stays visible in `go test -v` output instead of being silently
// absent.
//
// The behaviours use core/v1 ConfigMaps (no status, no generation), apps/v1 Deployments
// (status subresource, generation with a per-kind rule) and fedkit's Cluster CRD
// (cluster-scoped, status subresource, the custom-resource rules); the per-kind rules of a
// few other built-ins (DaemonSets, EndpointSlices, Leases, PriorityClasses) have behaviours of
// their own, and the stored ones check what a server makes of a built-in object (quantities
// canonical, empty fields dropped). Others create CRDs of their own, and namespaces, to check
// what is served and the namespace lifecycle. Namespaced objects go in a fresh namespace per run and cluster-scoped
// ones (CRDs included) carry the run's suffix, so a shared API server can run the suite more
// than once. Where a real server's controllers act a moment later (establishing or deleting
// a CRD), a behaviour polls for the outcome.
package conformance
