// Package agent is pull mode: a member cluster the control plane cannot reach, or must not
// hold a credential for, runs an agent that fetches what the federation assigned to it from
// the host and reports back.
//
//	// In the member (or next to it): hub reaches the host with an identity confined to
//	// the cluster's namespace there, member reaches the member's API server.
//	a, err := agent.New(hub, member, agent.Options{Cluster: "edge"})
//	go a.Run(ctx)
//
//	// On the host: the control plane's ClusterSet, push clusters and pull clusters alike.
//	set, err := agent.NewClusterSet(host, pushSet, agent.SetOptions{})
//	cp, err := controlplane.New(host, set, opts)
//
// # Registration
//
// A pull cluster's Cluster has spec.mode: Pull and no connection (no apiEndpoint, no
// secretRef: the host holds no credential for it). Its namespace on the host is
// federation.PullNamespace(name), "fedkit-cluster-<name>"; it must exist before the
// cluster gets anything. [HostManifests] returns it with the agent's identity there: a
// ServiceAccount and a Role that grants, in that namespace only, get, list and watch on
// Assignments, update and patch on their status, and get, create and update on Leases.
//
// # Assignments
//
// Each member object of a pull cluster is one federation.Assignment in the cluster's
// namespace, named federation.AssignmentName(resource, namespace, name): the object as sync
// rendered it for the cluster (overrides, schedule, retained fields, the federation's
// labels) and the change sync decided (Apply, Delete, Orphan). This is the rendered,
// per-cluster default: a write per cluster per change, as Karmada's Works and OCM's
// ManifestWorks. An agent reads only its own cluster's Assignments, so a FederatedSecret
// reaches only the clusters it is placed on. (Agents reading the templates themselves would
// cost one write per change, but every agent could read every template.)
//
// The host's side is a federation.ClusterClient, [HubClient], that [ClusterSet] hands out
// for a pull cluster. Sync, the status collector and the cluster monitor use it as any
// member's client, so every decision (placement, scheduling, overrides, rollouts, drift,
// deletion, status aggregation) is made once, by the same code, for both modes:
//
//   - Create writes a new Assignment (Apply); an existing one is AlreadyExists.
//   - Update writes the manifest: Apply when the object carries federation.ManagedByLabel,
//     else Orphan (sync orphans by writing the object without its labels).
//   - Delete turns the Assignment into a Delete, with the request's propagationPolicy.
//   - Get and List answer the agent's report: the member object as the agent last read it,
//     status included (the manifest until the agent has reported; marked as being deleted
//     while a Delete is under way). The resourceVersion and uid are the Assignment's, so
//     sync's optimistic locking and delete preconditions hold on the Assignment.
//   - Once the agent reports a Delete or an Orphan carried out, the next read removes the
//     Assignment and answers NotFound.
//   - When the agent reports that the member refused its write (ReasonFailed), sync learns it
//     as from a push member: an object the agent could not create is NotFound, and the
//     same create or update again fails with the member's answer (sync's status says
//     CreationFailed or UpdateFailed with it); a new manifest replaces the refused one.
//   - Healthy is the agent's Lease: renewed within its duration, or an error wrapping
//     federation.ErrUnreachable. The cluster monitor probes a pull cluster through it, so
//     the same thresholds, taints and eviction rules apply.
//   - Watch, Patch and UpdateStatus are not served: a pull cluster's objects change
//     through their reports, which the loops read on their resyncs.
//
// # The agent
//
// Each pass ([Agent.Reconcile]; [Agent.Run] calls it every Options.Period, and at once when
// a watch on the cluster's Assignments sees one change) probes the
// member (a member that does not answer renews no Lease, so the host sees the cluster as an
// unreachable push member, and the reports stay as they were), renews the Lease, reads the cluster's Assignments and carries out each one in the member with sync's
// own rules: plan.DecideApply (create what is absent, update what the desired-state hash
// says changed or what drifted, leave alone what another federation manages or the
// federation did not create) with override's retention (Renderer.Retain) before an update;
// plan.DecideRemoval for a Delete or an Orphan (delete only what carries the federation's
// identity, with the uid and version read as preconditions). An Assignment whose manifest is
// not the object its name and spec.resource say is never applied ([ErrInvalidAssignment]).
// It then writes the report
// (status: the member object, observedGeneration, the Applied condition) when it changed.
// For a workload (an applied object with spec.selector) the report also carries its pods
// and their metrics.k8s.io usage (status.metrics), read again once they are
// Options.MetricsPeriod old: the hub's autoscaler reads them there (autoscale.Reports), as
// it reads a push member's metrics API. A member whose metrics API is not served reports
// why (metrics.failed), never zero usage.
//
// When the host cannot be reached, the agent keeps the Assignments it read last and goes on
// correcting drift with them: an outage of the host is not an outage of the member. The
// cluster's Lease ages meanwhile, so the monitor marks the cluster not Ready and, after its
// eviction delay, the scheduler moves replicas away as for an unreachable push cluster.
// When the link heals, nothing is re-created: the member objects are where they were.
package agent
