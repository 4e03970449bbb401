// Package fake is an in-memory Kubernetes API and fleet of member clusters, for unit tests.
//
//	host := fake.NewHost("host")
//	fleet := fake.NewFleet()
//	eu := fleet.Add("eu", map[string]string{federation.RegionLabel: "europe-west1"})
//	fleet.Add("us", map[string]string{federation.RegionLabel: "us-east1"})
//	err := fleet.Register(ctx, host) // Cluster objects with Ready conditions
//	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
//	...
//	_ = fleet.Partition("us") // every call to us now fails as unreachable
//	eu.FailOn(fake.VerbUpdate, apierrors.NewServiceUnavailable("busy"), 1) // the next update fails
//
// It has the API server's semantics where a controller can tell the difference, recorded
// calls, and injected faults. It lets placement strategies, fedkit's loops and whole control
// planes run in unit tests, without processes or a network.
//
// A [Cluster] implements [federation.ClusterClient], [federation.HealthChecker],
// [federation.VersionGetter] and [federation.ResourceDiscoverer]. [Cluster.ServedResources]
// lists what it serves, built-ins and CRDs, and fails with [VerbDiscovery] faults.
// [NewHost] returns one that serves fedkit's CRDs, to use as the host. Tests that make many
// hosts make them from one [HostTemplate], which decodes the CRDs once. [NewCluster] returns
// one that serves the built-in resources only, as a member. A [Fleet] of named clusters
// implements [federation.ClusterSet] and [federation.MemberCache]. It describes its members
// as [federation.Cluster] objects, which [Fleet.Register] writes to a host.
//
// A zero Cluster is valid and is NewCluster(""); a zero Fleet is valid and empty.
//
// Nothing runs in the background. Constructors start no goroutines. The only goroutines are
// those of Run, which the caller starts, and one per open watch. A watch ends by Stop, by its
// ctx, by a partition, or when its resource stops being served.
//
// # What is modelled faithfully
//
// What is served. These are the built-in resources of a kube-apiserver v1.37 with its
// default configuration: GA versions only, apiextensions.k8s.io and apiregistration.k8s.io
// included. They have the kinds, scopes, subresources and verbs its discovery reports
// (builtin_resources.txt, which test/conformance checks against a real server). The
// resources of the CustomResourceDefinitions created in the cluster are served too.
// Anything else is a 404 on every verb, "the server could not find the requested resource".
// apierrors.IsNotFound recognises it like a missing object's NotFound. A verb a resource
// lacks is 405 MethodNotAllowed, or 404 where the real server has no route for it (a Get of
// a TokenReview). [Cluster.RESTMapping] maps kinds to what is served.
//
// CustomResourceDefinitions (apiextensions.k8s.io/v1). Creating one serves each of its
// served versions at once, at group/version/plural. Each has its scope, its kind and list
// kind, and the status subresource when the version declares subresources.status. The CRD's
// status then shows the accepted names and the NamesAccepted and Established conditions, as
// the real controllers write them a moment later. The strategy defaults names.singular,
// names.listKind and conversion, and sets status.storedVersions. It refuses with 422 Invalid,
// and the real messages:
//
//   - a name other than <plural>.<group>;
//   - a group without a dot;
//   - a protected *.k8s.io group without the api-approved.kubernetes.io annotation;
//   - an unknown scope, missing names, a version without a schema;
//   - anything but one storage version;
//   - a change of group or scope.
//
// An update that stops serving a version makes it 404; its objects are kept, as in etcd.
// Deleting a CRD gives it a deletionTimestamp, the
// customresourcecleanup.apiextensions.k8s.io finalizer and a Terminating condition. Creates
// of its resource are then Forbidden. Its objects are deleted, finalizers honoured. Once none
// is left the CRD is gone, its resource is 404, and its open watches end after their last
// events.
//
// Namespaces. Every cluster starts with default, kube-system, kube-public and
// kube-node-lease (resourceVersions 1 to 4). The NamespaceLifecycle admission plugin's rules
// apply. Create of an object of a namespaced resource is NotFound for its namespace when that
// does not exist (namespaces "x" not found). It is Forbidden with the NamespaceTerminating
// cause when the namespace is terminating. Updates and deletes are not checked. Deleting
// default, kube-system or kube-public is Forbidden.
//
// A Namespace is created Active, with the kubernetes finalizer in spec.finalizers and the
// kubernetes.io/metadata.name label. Deleting one makes it Terminating (deletionTimestamp,
// status.phase). As the namespace controller of a real cluster does, it deletes everything
// in it, finalizers honoured. The namespace is gone once it is empty and has no
// metadata.finalizers left.
//
// Storage. Objects are stored per GroupVersionResource, namespace and name, as copies that
// went through JSON. Callers never share memory with the store: every object returned or
// delivered by a watch is the caller's own.
//
// resourceVersion. There is one counter per cluster, bumped by every write and returned on
// every object and list. Update, UpdateStatus and Patch fail with Conflict when they carry a
// set, stale resourceVersion, or a uid that is not the stored one. An empty resourceVersion
// updates unconditionally where the real server's strategy allows it
// (AllowUnconditionalUpdate: most built-in types). Others refuse it with 422 Invalid
// (metadata.resourceVersion: must be specified for an update): custom resources, CRDs,
// APIServices, Leases, PodDisruptionBudgets, admission configurations and policies,
// CSIDrivers, CSINodes, VolumeAttachments, RuntimeClasses and the like. So do patches that
// remove it. [Cluster.SetUnconditionalUpdate] overrides the table. A write that changes
// nothing stores nothing: the resourceVersion stays and no watch event is sent.
//
// Create sets uid, creationTimestamp (from the cluster's clock), resourceVersion, and
// metadata.generation 1 for types that track it. It honours metadata.generateName: five
// random characters, retried when taken. Admission (a terminating CRD, the namespace
// lifecycle) comes first. Then the metadata is validated (below), before an existing name is
// AlreadyExists. A set resourceVersion is refused with an InternalError, as the real
// server's storage returns. Status is dropped for resources with a status subresource
// (except Nodes). A missing kind, or an apiVersion other than the resource's, is a
// BadRequest; an empty apiVersion is filled in.
//
// On every write, an object of a built-in kind (one client-go's scheme knows) must decode
// into its Go type. Else the write is a BadRequest, as the real server's decoding makes it:
// a string in spec.replicas does not get stored. What decodes is stored as the real server
// encodes it. Resource quantities are canonical (cpu: 1 as "1", 0.5 as "500m"). Empty
// values of fields the type omits when empty ("", false, 0, {}, []) are dropped. So are the
// fields the type does not have (a typo, an Ingress's v1beta1 serviceName). A Create or
// Update that dropped some answers, as the real server's default field validation (Warn)
// does, with a warning per field in its words (`unknown field "spec.x"`), handed to the
// request's handler (federation.WithWarningHandler). A Patch drops them without a warning.
// A Secret's stringData is merged into its data, each key replacing data's, and never stored.
//
// Metadata validation. Every Create, Update, UpdateStatus and Patch (and Drift) runs the
// real server's metadata rules, with k8s.io/apimachinery's own validation functions. It
// answers 422 Invalid naming the field:
//
//   - metadata.name (and generateName) must be a DNS subdomain for most resources and
//     custom resources, a DNS label for namespaces, services and statefulsets, and a path
//     segment for RBAC objects, certificatesigningrequests and apiservices;
//   - label keys and values, annotation keys and their 256 KiB total, ownerReferences and
//     finalizer names must be valid;
//   - an update cannot set a deletionTimestamp or deletionGracePeriodSeconds (only Delete
//     does: "field is immutable"), nor add a finalizer to an object being deleted.
//
// A deletionTimestamp already set is kept whatever the update sends. So are uid (when left
// empty), creationTimestamp, generation and resourceVersion. A patch that changes the name
// or the namespace is a BadRequest. One that removes the namespace gets the request's back,
// as from the real patch handler.
//
// generation follows the resource's rule, as its real strategy has it (Kubernetes 1.37).
// Custom resources (any group not built into Kubernetes) and most built-ins that track one
// bump it when anything but metadata changes. Status does not count when the resource has a
// status subresource. That is the CRD rule, and it comes to the same as built-ins comparing
// .spec (or .template, .webhooks). The exceptions:
//
//   - a Deployment also bumps on an annotation change;
//   - an EndpointSlice bumps on a label change;
//   - a PriorityClass never bumps after create;
//   - a CSIDriver has none until its first spec change.
//
// Among built-ins only the types whose strategy sets a generation carry one: pods,
// podtemplates, replicationcontrollers, the apps workloads, jobs, cronjobs,
// horizontalpodautoscalers, endpointslices, ingresses, ingressclasses, networkpolicies,
// poddisruptionbudgets, priorityclasses, admission and flow-control objects,
// customresourcedefinitions... The others (ConfigMaps, Secrets, Services, Namespaces, Nodes,
// ...) have none. Clients cannot set it; marking an object deleting bumps it. A DaemonSet
// also carries the server's template generation, which apps/v1 serves as the annotation
// deprecated.daemonset.template.generation. It is 1 on create, kept whatever an update
// sends, and bumped when spec.template changes.
//
// Status subresource. For resources that have one, Update ignores .status and UpdateStatus
// changes only .status. UpdateStatus on the others is NotFound. A built-in has one when the
// real server serves its /status: pods, services, namespaces, nodes, the apps workloads,
// jobs, ingresses, customresourcedefinitions...; not ConfigMaps, Secrets, ServiceAccounts
// or RBAC objects. A custom resource has one when its CRD's version declares it (fedkit's
// do, dnsrecord's Domain excepted). [Cluster.SetStatusSubresource] overrides it.
//
// Scope is as discovery reports it for built-ins, and the CRD's spec.scope for custom
// resources; [Cluster.SetNamespaced] overrides it. A namespaced resource needs a namespace on
// every call but List and Watch, else BadRequest; there "" means all namespaces. For a
// cluster-scoped resource the namespace is ignored.
//
// Finalizers. Delete of an object with finalizers sets deletionTimestamp (and bumps
// generation) and keeps it. Adding finalizers to it is then Invalid. The update (or patch,
// or Drift) that removes the last finalizer is not written: the stored object is deleted.
// So watches get Deleted with its last stored state at a new resourceVersion; a label
// selector sees the labels it had. The update returns the object it sent, at the
// resourceVersion it had, as from the real server.
//
// Delete honours opts.Preconditions (uid, resourceVersion; Conflict when they fail) and
// opts.DryRun. It puts on the garbage collector's finalizers as the real server does: orphan
// for propagationPolicy Orphan, foregroundDeletion for Foreground, neither for Background.
// Orphan is the default of batch/v1 Jobs and v1 ReplicationControllers. A second Delete with
// another policy swaps them. No garbage collector runs, so such an object stays, deleting,
// until its finalizers are removed.
//
// List supports label selectors and the field selectors metadata.name and
// metadata.namespace; others are a BadRequest. Items are sorted by namespace and name, and
// the list has its resourceVersion.
//
// Watch sends Added, Modified and Deleted events in resourceVersion order, each object
// carrying its resourceVersion, filtered by namespace and selectors. A watch ends when its
// resource stops being served, after its queued events. An object that starts or stops
// matching a label selector arrives as Added or Deleted, as from the real watch cache.
//
// A watch from resourceVersion "" or "0" starts with synthetic Added events for the current
// objects. From any other resourceVersion it replays the cluster's event history: the last
// 1024 events, see [Cluster.SetWatchHistory]. One older than the history fails with 410
// Expired (apierrors.IsResourceExpired), returned by the Watch call itself. A real server
// opens the stream and sends it as an ERROR event instead; code that handles both is right
// for both. SendInitialEvents ends the initial events with the "k8s.io/initial-events-end"
// bookmark, so client-go's watch-list works.
//
// Patch supports JSON patch (RFC 6902) and JSON merge patch (RFC 7386) for every resource. It
// supports strategic merge patch for the built-in types client-go knows; custom resources get
// 415 UnsupportedMediaType, as from the real server. The result is written like an Update.
//
// Errors are k8s.io/apimachinery/pkg/api/errors values with the resource's GroupResource. So
// apierrors.IsNotFound, IsAlreadyExists, IsConflict, IsInvalid, IsBadRequest,
// IsResourceExpired and IsUnsupportedMediaType work, also through wrapping.
//
// # Recording and injection
//
// Every client call is recorded as an [Action] (see [Cluster.Actions]) and counted by verb
// ([Cluster.ActionCounts]) before anything else happens. [Cluster.SetRecording] (or
// [Fleet.SetRecording]) turns the recording off, not the counting, for long benchmarks and
// soaks. [Fleet.SetInterning] (or [Cluster.SetInterning]) halves what a fleet holding the
// same objects in many members keeps in memory, for runs of hundreds of thousands of
// objects. Then, in order:
//
//  1. a done ctx returns ctx.Err();
//  2. a partitioned cluster fails the call as unreachable;
//  3. latency ([Cluster.SetLatency]) waits on the cluster's clock;
//  4. FailOn and SetErrorRate faults fail the call;
//  5. the [Hooks] func for the verb, if set, handles it, with the plain storage as next.
//
// A partitioned cluster ([Fleet.Partition], [Cluster.Partition]) fails every call with an
// error that wraps [federation.ErrUnreachable]. It also wraps a *url.Error around a refused
// TCP connection, the error client-go returns for a server that is down. So errors.Is(err,
// federation.ErrUnreachable), errors.As with *url.Error or net.Error, and
// k8s.io/apimachinery/pkg/util/net.IsConnectionRefused all hold. apierrors predicates are
// false, as for any network error. Open watches end when the partition starts.
//
// Test-side writes do not go through the client and are not recorded:
//
//   - [Cluster.Apply] writes fixtures given as YAML. They are created or replaced with the
//     rules of Create and Update, status included, as a user with kubectl and the
//     controllers owning the status would leave them. It is strict like kubectl: an unknown
//     field or a duplicate key is an error naming document, line and field.
//   - [Cluster.Seed] stores fixtures in any state, under the resource serving their kind.
//     There is no admission or metadata validation, as for objects admitted under older
//     rules: their namespace need not exist.
//   - [Cluster.Drift] and [Cluster.DriftDelete] are changes made behind the controllers'
//     back by another actor. They are validated, bump resourceVersions and reach watches
//     like any write.
//
// [Cluster.Peek] and [Cluster.Objects] read without recording.
//
// # Member caches
//
// [Fleet.CachedReader] and [Fleet.OnMemberChange] implement [federation.MemberCache]: the
// informer caches of managed member objects that loops read instead of the members' API
// servers. The cache of a (member, resource) starts with the first CachedReader call. It sees
// only objects carrying federation.ManagedByLabel (any value). Its reads come from the
// member's store and are not API calls. No Action is recorded and no fault, latency or hook
// applies, so a test counting API calls sees none for them.
//
// While the member is partitioned, the cache serves the state it had when the partition
// began, as an informer keeps its last state. [Fleet.CacheHealth] says it is cut off since
// then. It follows the member again at Heal. A cache started during a partition has not
// synced, and its reads fail at once as unreachable until Heal.
//
// OnMemberChange handlers are called after each write commits, on the writer's goroutine,
// outside every lock, in the member's commit order. They get the member's name and their own
// copy of the object. Deleted objects, and objects that lost the label, come in their last
// managed state. Handlers are called for the client's writes, Seed, Drift, DriftDelete and
// the simulated controllers, and at Heal for what changed during the partition. Only members
// whose cache of the resource was started are notified. [Fleet.OnMemberChangeReadOnly]
// handlers ([federation.ReadOnlyMemberChanges]) are called the same way with the stored
// object itself, not a copy: they must not modify it.
//
// # Metrics
//
// A member serves the metrics APIs an HPA reads once the test gives it a series:
// metrics.k8s.io PodMetrics after [Cluster.SetPodMetrics] (metrics-server installed),
// custom.metrics.k8s.io after [Cluster.SetCustomMetric] and external.metrics.k8s.io after
// [Cluster.SetExternalMetric] (an adapter installed). Before that each answers 404, as a
// cluster without them does. A series is a list of points in time: at the cluster's clock
// the last point at or before it is served, stamped with the clock. A pod without a point yet
// has no PodMetrics. PodMetrics carry their pod's labels, so a List with the workload's
// selector finds its pods; only pods stored in the cluster have them. PodMetrics and external
// values are read with List; custom metrics with [Cluster.GetCustomMetric]
// ([federation.CustomMetricsGetter]). Calls are recorded and fail like any other
// (partitions, faults). PodMetrics cannot be read with Get.
//
// # Simulated controllers
//
// [Workloads] stand in for the controllers of a real cluster. Set them with
// [Cluster.SetWorkloads] or [Fleet.SetWorkloads]; they are off by default. Deployments,
// ReplicaSets and StatefulSets report status following their spec after a delay on the
// injected clock, within a pod capacity. They are never ready when their pod template uses
// one of Workloads.FailingImages, as a bad release would. Services of type LoadBalancer get
// an ingress IP from a pool. The controllers run when the test calls [Cluster.Tick] or
// [Fleet.Tick], or under [Cluster.Run] or [Fleet.Run]. [Fleet.Add] with topology labels also
// gives the member a Node in that region and zone.
//
// # What is not modelled
//
//   - Admission other than NamespaceLifecycle (no quota, LimitRanger, ServiceAccount or
//     webhooks), defaulting, and the validation of the objects' own fields. Objects are
//     stored as sent, apart from the metadata rules, the Namespace and CRD strategies, the
//     DaemonSet template generation and the decoding above. Fields a built-in type does not
//     have are kept, where a real server drops them. Type-specific name rules beyond the
//     ones above (a CronJob's 52 characters) are not checked. Immutable spec fields (a
//     Deployment's selector, a Job's template) can change. Nothing is defaulted: a
//     Deployment without replicas is treated as 1 only by the simulation.
//   - CRD schemas: custom resources are not validated, pruned or defaulted by their schema,
//     and a CRD's schema is not checked beyond its presence. Names never conflict
//     (NamesAccepted is always True). Printer columns, selectable fields and the scale
//     subresource are ignored.
//   - Review resources (TokenReview, SubjectAccessReview...) are stored like any object
//     instead of being answered, and APIServices serve nothing: the metrics APIs are
//     served by the cluster itself (# Metrics).
//   - The delay of the real controllers. A CRD is served and Established, and a deleted
//     namespace or CRD emptied, at once, where a real cluster takes a moment. (A
//     kube-apiserver without a controller manager leaves deleted namespaces Terminating.)
//   - Server-side apply and managedFields: Apply patches are refused with 415.
//   - Garbage collection and ownerReferences: deleting an owner leaves its dependents, and
//     the propagation policy is ignored. Deleting a Namespace or a CRD does delete what is
//     in it (above).
//   - Versions and conversion: each GroupVersionResource is its own storage. The same object
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
// Use a real kube-apiserver when a test depends on anything listed as not modelled: CRD
// schemas, validation and defaulting, admission webhooks, server-side apply, garbage
// collection, conversion, or client-go's real transport, informers and their timing. That is
// controller-runtime's envtest, or fedkit's hack/dev-clusters.sh, which starts a host and two
// members on 127.0.0.1 and prints their kubeconfig. fedkit's own integration tests under
// test/ do so. Use the fake for the logic: placement, scheduling, sync decisions, status
// aggregation, retries and fault handling. There its determinism and injection make tests
// fast and exact.
package fake
