// Package kubectlfed is the kubectl plugin `kubectl fed`: join, unjoin, clusters, status,
// rollback, preview, migrate and version, and the operator verbs federate, promote, get,
// describe, cordon, uncordon, taint and orphaning-deletion, enable and disable.
//
//	code := kubectlfed.Main(ctx, os.Args[1:], kubectlfed.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
//	os.Exit(code)
//
// cmd/kubectl-fed only calls [Main].
//
// Clients come from a kubeconfig, loaded as kubectl loads it (clientcmd: --kubeconfig,
// KUBECONFIG, ~/.kube/config). --context (or --host-context) picks the host.
//
// join applies config/rbac/member's role in the member, under names of this federation and
// Cluster only, and requests a token through the member's TokenRequest API (no token
// controller needed) that lasts --token-lifetime. Then it writes the Cluster and its
// labelled Secret on the host. Running it again renews the token and changes nothing else.
//
// unjoin deletes the Cluster and waits (--wait, --timeout) until it is gone, sync's clean-up
// done, before it revokes the credentials: the host Secret, then the member account. A
// Cluster still there after --timeout keeps them unless --force.
//
// status warns of each of the object's clusters whose credentials expire soon (the Cluster's
// CredentialsExpiring condition).
//
// clusters lists the Cluster objects with the columns placement reads (Ready, taints,
// region and zones as federation.Cluster resolves them, version, capacity). version prints
// the plugin's version (Options.Version, else the build information's) and the control
// plane's: each replica writes its version on the Leases it holds
// (federation.ControlPlaneVersionAnnotation), so the Leases say which version leads or
// holds each shard, with no object or permission of its own.
//
// status, rollback, preview and migrate call the library: the object's status, fedsync's
// rollback, package preview and package migrate. The command decides nothing of its own.
// preview --down CLUSTER shows the failover plan with those clusters down.
// preview prints each native object's policy, and why the other policies lost. Each workload
// lists its dependencies and where they follow it.
//
// The operator verbs. Every one that writes takes --dry-run (kubectl's client-side dry run:
// the objects it would write are printed as YAML, nothing is written) and writes locked on
// the resourceVersion it read. federate makes a host object (or, with --namespace-contents, a
// namespace and what users made in it) a Federated<Kind> through federation.NativeTemplate.
// promote makes one of a member's objects a Federated<Kind> placed in that member and
// annotated federation.AdoptAnnotation, so sync adopts the copy in place; it refuses a copy a
// federation manages. cordon and uncordon set and remove federation.TaintClusterUnschedulable
// (NoSchedule); taint takes kubectl taint's syntax and leaves the cluster monitor's taints to
// it. get and describe read each member's copy live, through the members the host's
// Clusters and Secrets name (Options.Clusters in tests), and judge it with the status
// collector's extractor of the kind. orphaning-deletion sets, removes or reads
// federation.OrphanAnnotation. Options.Host and Options.Clusters replace the kubeconfig's host
// and members: the verbs' tests run on the fake fleet.
//
// enable federates a served type without Go code: it reads the target's schema (a CRD's
// openAPIV3Schema, or a built-in kind's from the API server's OpenAPI v3, references inlined
// and made structural), writes federation.CRDWithTemplateSchema's CRD and the
// federation.FederatedTypeConfig (its rules compiled by package kinds first: bad rules write
// nothing), and prints the RBAC the loops need. Every verb knows the host's
// FederatedTypeConfigs' types besides the built-in ones. disable deletes the configuration;
// --delete-crd deletes the Federated<Kind> CRD only when no object of it is left, as deleting
// it would delete them. Neither touches a member object.
package kubectlfed
