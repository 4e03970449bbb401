// Package kubectlfed is the kubectl plugin `kubectl fed`: join, unjoin, clusters, status,
// rollback, preview, migrate and version.
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
package kubectlfed
