// Package fake is an in-memory Kubernetes API and fleet of member clusters, with the API
// server's semantics where a controller can tell the difference, recorded calls, and injected
// faults. It lets placement strategies, fedkit's loops and whole control planes run in unit
// tests, without processes or a network.
//
// A [Cluster] implements [federation.ClusterClient] (with [federation.HealthChecker] and
// [federation.VersionGetter]); use one as the host and others as members. A [Fleet] of named
// clusters implements [federation.ClusterSet] and describes its members as
// [federation.Cluster] objects, which [Fleet.Register] writes to a host:
//
//	host := fake.NewCluster("host")
//	fleet := fake.NewFleet()
//	eu := fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1"})
//	fleet.Add("us", map[string]string{federation.RegionLabel: "us-east1"})
//	err := fleet.Register(ctx, host) // Cluster objects with Ready conditions
//	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
//	...
//	_ = fleet.Partition("us") // every call to us now fails as unreachable
//	eu.FailOn(fake.VerbUpdate, apierrors.NewServiceUnavailable("busy"), 1) // the next update fails
//
// A zero Cluster and a zero Fleet are valid and empty.
//
// Nothing runs in the background: constructors start no goroutines, and the only goroutines
// are one per open watch (ended by Stop, by its ctx, or by a partition) and those of Run,
// which the caller starts.
//
// # What is modelled faithfully
//
// Storage: objects are stored per GroupVersionResource, namespace and name, as copies that
// went through JSON; callers never share memory with the store, and every object returned or
// delivered by a watch is the caller's own.
//
// resourceVersion: one counter per cluster, bumped by every write and returned on every
// object and list. Update, UpdateStatus and Patch with a set, stale resourceVersion, or a uid
// that is not the stored one, fail with Conflict. An empty resourceVersion updates
// unconditionally where the real server's strategy allows it (AllowUnconditionalUpdate: most
// built-in types); custom resources, CRDs, APIServices, Leases, PodDisruptionBudgets,
// admission configurations and policies, CSIDrivers, CSINodes, VolumeAttachments,
// RuntimeClasses and the like refuse it with 422 Invalid (metadata.resourceVersion: must be
// specified for an update), as do patches that remove it. [Cluster.SetUnconditionalUpdate]
// overrides the table. A write that changes nothing stores nothing: the resourceVersion stays
// and no watch event is sent.
//
// Create: uid, creationTimestamp (from the cluster's clock), resourceVersion, and
// metadata.generation 1 for types that track it; metadata.generateName is honoured (five
// random characters, retried when taken); the metadata is validated (below) before an
// existing name is AlreadyExists; a set resourceVersion is refused (an InternalError, as the
// real server's storage returns); status is dropped for resources with a status subresource
// (except Nodes); a missing kind, or an apiVersion other than the resource's, is a BadRequest
// (an empty apiVersion is filled in).
// On every write, an object of a built-in kind (one client-go's scheme knows) must decode into
// its Go type, or the write is a BadRequest, as the real server's decoding makes it: a string
// in spec.replicas does not get stored.
//
// Metadata validation: every Create, Update, UpdateStatus and Patch (and Drift) runs the
// real server's metadata rules, with k8s.io/apimachinery's own validation functions, and
// answers 422 Invalid naming the field. metadata.name (and generateName) must be a DNS
// subdomain for most resources and custom resources, a DNS label for namespaces, services and
// statefulsets, and a path segment for RBAC objects, certificatesigningrequests and
// apiservices; label keys and values, annotation keys and their 256 KiB total,
// ownerReferences and finalizer names must be valid. An update cannot set a
// deletionTimestamp or deletionGracePeriodSeconds (only Delete does: "field is immutable"),
// nor add a finalizer to an object being deleted; a deletionTimestamp already set is kept
// whatever the update sends, and so are uid (when left empty), creationTimestamp, generation
// and resourceVersion. A patch that changes the name or the namespace is a BadRequest (one
// that removes the namespace gets the request's back, as from the real patch handler).
//
// generation: by the resource's rule, as its real strategy has it (Kubernetes 1.37). Custom
// resources (any group not built into Kubernetes) and most built-ins that track one bump it
// when anything but metadata changes, status not counting when the resource has a status
// subresource: that is the CRD rule, and it comes to the same as built-ins comparing .spec
// (or .template, .webhooks). The exceptions: a Deployment also bumps on an annotation change,
// an EndpointSlice on a label change, a PriorityClass never bumps after create, and a
// CSIDriver has none until its first spec change. Among built-ins only the types whose
// strategy sets a generation carry one (pods, podtemplates, replicationcontrollers, the apps
// workloads, jobs, cronjobs, horizontalpodautoscalers, endpointslices, ingresses,
// ingressclasses, networkpolicies, poddisruptionbudgets, priorityclasses, admission and
// flow-control objects, customresourcedefinitions...); the others (ConfigMaps, Secrets,
// Services, Namespaces, Nodes, ...) have none. Clients cannot set it; marking an object
// deleting bumps it. A DaemonSet also carries the server's template generation, which apps/v1
// serves as the annotation deprecated.daemonset.template.generation: 1 on create, kept
// whatever an update sends, and bumped when spec.template changes.
//
// Status subresource: Update ignores .status and UpdateStatus changes only .status for
// resources that have one; UpdateStatus on the others is NotFound. Custom resources are
// assumed to have one; among built-ins, those whose REST storage serves /status in Kubernetes
// 1.37 do (pods, services, namespaces, nodes, persistentvolumes and claims, resourcequotas,
// replicationcontrollers, the apps workloads, jobs, cronjobs, horizontalpodautoscalers,
// ingresses, poddisruptionbudgets, certificatesigningrequests, customresourcedefinitions,
// apiservices...), and ConfigMaps, Secrets, ServiceAccounts, RBAC objects and the like do not.
// [Cluster.SetStatusSubresource] overrides it, e.g. for a CRD without a status subresource.
//
// Scope: namespaces, nodes, persistentvolumes, clusterroles, clusterrolebindings,
// customresourcedefinitions, apiservices, storageclasses, csidrivers, csinodes,
// volumeattachments, priorityclasses, ingressclasses, runtimeclasses, certificatesigningrequests,
// webhook and admission policy configurations, and fedkit's clusters
// (core.federation.k8s.io) are cluster-scoped; every other resource is namespaced.
// [Cluster.SetNamespaced] overrides it. A namespaced resource needs a namespace on every call
// but List and Watch (where "" means all namespaces), else BadRequest; for a cluster-scoped
// resource the namespace is ignored.
//
// Finalizers: Delete of an object with finalizers sets deletionTimestamp (and bumps
// generation) and keeps it; adding finalizers to it is then Invalid; the update (or patch)
// that removes the last finalizer deletes it and emits Deleted. Delete honours
// opts.Preconditions (uid, resourceVersion; Conflict when they fail) and opts.DryRun.
//
// List: label selectors and the field selectors metadata.name and metadata.namespace (others
// are a BadRequest), items sorted by namespace and name, and the list's resourceVersion.
//
// Watch: Added, Modified and Deleted events in resourceVersion order, each object carrying
// its resourceVersion, filtered by namespace and selectors. An object that starts or stops
// matching a label selector arrives as Added or Deleted, as from the real watch cache. A watch
// from resourceVersion "" or "0" starts with synthetic Added events for the current objects;
// from any other resourceVersion it replays the cluster's event history (the last 1024 events,
// see [Cluster.SetWatchHistory]); one older than the history fails with 410 Expired
// (apierrors.IsResourceExpired), returned by the Watch call itself, where a real server opens
// the stream and sends it as an ERROR event; code that handles both is right for both.
// SendInitialEvents ends the initial events with the "k8s.io/initial-events-end" bookmark,
// so client-go's watch-list works.
//
// Patch: JSON patch (RFC 6902) and JSON merge patch (RFC 7386) for every resource; strategic
// merge patch for the built-in types client-go knows (custom resources get 415
// UnsupportedMediaType, as from the real server); the result is written like an Update.
//
// Errors are k8s.io/apimachinery/pkg/api/errors values with the resource's GroupResource, so
// apierrors.IsNotFound, IsAlreadyExists, IsConflict, IsInvalid, IsBadRequest,
// IsResourceExpired and IsUnsupportedMediaType work, also through wrapping.
//
// # Recording and injection
//
// Every client call is recorded as an [Action] (see [Cluster.Actions]) before anything else
// happens. Then, in order: a done ctx returns ctx.Err(); a partitioned cluster fails the call
// as unreachable; latency ([Cluster.SetLatency]) waits on the cluster's clock; FailOn and
// SetErrorRate faults fail the call; then the [Hooks] func for the verb, if set, handles it,
// with the plain storage as next.
//
// A partitioned cluster ([Fleet.Partition], [Cluster.Partition]) fails every call with an
// error that wraps [federation.ErrUnreachable] and a *url.Error around a refused TCP
// connection, the error client-go returns for a server that is down: errors.Is(err,
// federation.ErrUnreachable), errors.As with *url.Error or net.Error, and
// k8s.io/apimachinery/pkg/util/net.IsConnectionRefused all hold; apierrors predicates are
// false, as for any network error. Open watches end when the partition starts.
//
// Test-side writes do not go through the client and are not recorded: [Cluster.Seed] for
// fixtures (stored without the metadata validation, as objects admitted under older rules
// are), and [Cluster.Drift] and [Cluster.DriftDelete] for changes made behind the
// controllers' back by another actor, which are validated, bump resourceVersions and reach
// watches like any write. [Cluster.Peek] and [Cluster.Objects] read without recording.
//
// # Simulated controllers
//
// [Workloads], set with [Cluster.SetWorkloads] or [Fleet.SetWorkloads] and off by default,
// stand in for the controllers of a real cluster: Deployments, ReplicaSets and StatefulSets
// report status following their spec after a delay on the injected clock, within a pod
// capacity; Services of type LoadBalancer get an ingress IP from a pool. They run when the test
// calls [Cluster.Tick] or [Fleet.Tick], or under [Cluster.Run] or [Fleet.Run]. [Fleet.Add]
// with topology labels also gives the member a Node in that region and zone.
//
// # What is not modelled
//
//   - Admission, defaulting and the validation of the objects' own fields: objects are
//     stored as sent, apart from the metadata rules, the DaemonSet template generation and
//     the decoding check above. Namespaces need not exist; type-specific name rules beyond
//     the ones above (a CRD's "<plural>.<group>", a CronJob's 52 characters) are not
//     checked; immutable spec fields (a Deployment's selector, a Job's template) can change;
//     nothing is defaulted (a Deployment without replicas is treated as 1 only by the
//     simulation).
//   - Server-side apply and managedFields: Apply patches are refused with 415.
//   - Garbage collection and ownerReferences: deleting an owner leaves its dependents; the
//     propagation policy is ignored; deleting a Namespace does not delete its contents.
//   - Versions and conversion: each GroupVersionResource is its own storage; the same object
//     is not visible through two versions.
//   - RBAC, authentication, quotas, rate limiting and priority and fairness.
//   - Watch bookmarks (except the watch-list one above), watch timeouts, and an etcd-like
//     time-based compaction: the history is a count of events.
//   - List pagination (Limit and Continue are ignored; every list is complete) and
//     resourceVersion semantics for List (every list is the most recent).
//   - Field selectors other than metadata.name and metadata.namespace.
//   - Pods, ReplicaSets created by Deployments, scheduling, and kubelets: the simulation only
//     writes workload status.
//
// # When to use a real API server instead
//
// Use a real kube-apiserver (fedkit's internal/testenv starts real kube-apiserver and etcd
// processes on 127.0.0.1, and test/ holds the integration tests built on it) when a test depends on anything listed as
// not modelled: CRD schemas, validation and defaulting, server-side apply, garbage
// collection, conversion, or client-go's real transport, informers and their timing. Use the
// fake for the logic: placement, scheduling, sync decisions, status aggregation, retries and
// fault handling, where its determinism and injection make tests fast and exact.
package fake
