// Package kube connects fedkit to real Kubernetes API servers with client-go.
//
//	host, clusters, err := kube.ConnectKubeconfig("", "host", kube.ClusterSetOptions{}, "eu", "us")
//	err = clusters.Register(ctx, host) // writes the Cluster objects the loops read
//	member, err := clusters.Client("eu")
//	dep, err := member.Get(ctx, deploymentsGVR, "production", "web")
//
// It provides the real implementations of the two interfaces every fedkit loop is written
// against:
//
//   - [Client] is a [federation.ClusterClient] on client-go's dynamic client. It is also a
//     [federation.HealthChecker] (GET /readyz), a [federation.VersionGetter] (GET /version)
//     and a [federation.ResourceDiscoverer] ([Client.ServedResources], GET /apis...). Its
//     discovery-backed [Client.RESTMapping] maps kinds to resources.
//   - [ClusterSet] is a [federation.ClusterSet] that keeps one Client per Cluster object on
//     the host, built from the Cluster's spec and its Secret. It is also a
//     [federation.MemberCache]: shared informer caches of the member objects the federation
//     manages ([ClusterSet.CachedReader]) and their change notifications
//     ([ClusterSet.OnMemberChange]).
//
// Package kube imports only package federation from fedkit. Tests of loops use package fake
// instead. Both implementations pass one conformance suite (internal/conformance), run
// against a real kube-apiserver in test/conformance.
//
// # One cluster: Client
//
// [New] is the one constructor. It takes a *rest.Config (from a kubeconfig, in-cluster
// config, or your own code) and [Options]. With [Options].Dynamic instead of a rest.Config
// it adapts any dynamic.Interface, client-go's dynamic fake included. That is handy in unit
// tests and examples that need no server; such a Client has no discovery.
//
//	c, err := kube.New(cfg, kube.Options{QPS: 100, Burst: 200})
//	t, err := kube.New(nil, kube.Options{Dynamic: dynamicfake.NewSimpleDynamicClient(scheme)})
//	dep, err := c.Get(ctx, deploymentsGVR, "production", "web")
//	if apierrors.IsNotFound(err) { ... }
//	if errors.Is(err, federation.ErrUnreachable) { ... } // the network, not the API
//
// Every error starts with "kube: " and the operation ("kube: get deployments.apps
// production/web: ..."). It keeps the API server's error in its chain, so
// apierrors.IsNotFound, IsConflict and friends work. Some errors are caused by the network
// rather than by the API: refused connections, DNS failures, timeouts, untrusted
// certificates, 502/503/504 answers. They also wrap [federation.ErrUnreachable], which the
// cluster monitor uses to tell an offline cluster from a failing request. The caller's own
// cancellation never counts as unreachable.
//
// Constructors do no I/O and start no goroutines: the first request opens the connection.
//
// # Many clusters: ClusterSet
//
// A federation registers each member with a Cluster object on the host. It keeps the
// member's credentials in a Secret, in "fedkit-system" unless [ClusterSetOptions].Namespace
// says otherwise:
//
//	apiVersion: core.federation.k8s.io/v1alpha1
//	kind: Cluster
//	metadata: {name: eu}
//	spec:
//	  apiEndpoint: https://eu.example.com:6443
//	  caBundle: <base64 PEM>           # verifies the server; TLS verification is on by default
//	  secretRef: {name: eu-credentials}
//	  proxyURL: socks5://proxy:1080    # optional
//	---
//	apiVersion: v1
//	kind: Secret
//	metadata:
//	  name: eu-credentials
//	  namespace: fedkit-system
//	  labels: {federation.k8s.io/cluster: eu}   # the one Cluster that may use it
//	stringData:
//	  token: <bearer token>            # or "kubeconfig: <kubeconfig with inline credentials>"
//
// # Who may use a Secret
//
// A Secret is bound to one Cluster by its [federation.SecretClusterLabel] label. A Cluster
// gets no client when its secretRef names a Secret without that label, or one labelled for
// another Cluster. So whoever may create Clusters cannot point one at another cluster's
// Secret and at a server of their own, to receive that cluster's token. The Secret's writer
// decides. Whoever may update a Cluster's spec can still move its apiEndpoint. Grant that
// right only to those trusted with its credentials.
//
// # Credentials stay out of memory and logs
//
// Run's informer keeps Secrets without data, annotations (kubectl's last-applied copy) or
// managedFields. It does so in a shared host cache too (ClusterSetOptions.Cache, [package
// hostcache]). A Secret is read from the API server only when its resourceVersion moved,
// never on a Cluster status write. Error bodies and Warning headers of every answer have the
// client's token and password cut out. Warnings are logged through the request's logger
// and handed to its warning handler (federation.WithWarningHandler).
//
// [RESTConfig] documents exactly what is read from each, and what is refused:
//
//   - a kubeconfig in a Secret that would run exec plugins or read files;
//   - a spec that fails [federation.ValidateClusterConnection]: an apiEndpoint that is not
//     https or carries user information, a query or a fragment; a proxy that is not http,
//     https or socks5.
//
// That function is the one rule for these fields. So the validation a webhook or CLI runs on
// a Cluster and the check before a client is built cannot disagree.
// spec.insecureSkipTLSVerify is the one, explicit way to turn certificate checks off, for
// throw-away test clusters.
//
// [NewClusterSet] takes the host's ClusterClient. Like every fedkit loop it has a one-pass
// [ClusterSet.Reconcile] and an optional [ClusterSet.Run]:
//
//	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Logger: log})
//	go set.Run(ctx)                  // watches Clusters and Secrets, calls Reconcile
//	member, err := set.Client("eu")  // federation.ErrClusterNotFound / ErrClusterNotReady
//
// Reconcile builds a cluster's client. It rebuilds it when the spec's connection fields or
// the Secret's credentials change, and only then. It releases it when the Cluster is
// deleted. Calls for one cluster are serialized, from reading the Cluster and its Secret to
// installing the client. So concurrent calls (an embedder's own workers, say) install what
// was read last. A Cluster whose client cannot be built stays known but not ready. Client
// then returns an error wrapping [federation.ErrClusterNotReady] and the reason, often
// [ErrInvalidCredentials].
//
// Credentials never appear in errors, logs or status. Errors name the Secret and the key,
// never the value, and Run's Secret informer drops Secret data as it receives it. A member,
// or a proxy in front of it, may quote the request's Authorization header back in an error
// answer. That does not get it through either. A Client's transport replaces its own token,
// password and basic-auth header with "[redacted]" in every error answer, before client-go
// turns it into an error. (client-go itself logs request and response bodies at V(8)
// through the context's logger: keep a production logger below that verbosity.)
//
// Run is fedkit's common loop engine, the one every loop's Run uses. It reads Clusters from
// its informer cache rather than the API server. Secrets always come from the API server,
// since no cache keeps credentials. Run logs list and watch failures. The host may not list
// Clusters or Secrets within [ClusterSetOptions].CacheSyncTimeout (a missing CRD, missing
// RBAC). Then Run returns an error naming the resource instead of waiting silently.
//
// Embedders who know their clusters up front (a CLI, a test harness) skip the host. They
// build a static set from kubeconfig contexts with [ClusterSetFromKubeconfig]; see its
// example.
//
// # Connecting: a host and its members in one call
//
// [Connect] builds both from the host's rest.Config, the members being the Clusters
// registered there. In a control plane deployed on the host, that is rest.InClusterConfig().
// [ConnectKubeconfig] takes the host from a kubeconfig context. [ConfigFromKubeconfig]
// follows kubectl's rules for an empty path or context. It takes the members either from
// the host or from other contexts of the same file. Such a static set writes the Cluster
// objects the loops read with [ClusterSet.Register], as at the top.
//
// # Events
//
// [EventSink] is a client-go record.EventSink over any ClusterClient. So a
// record.EventBroadcaster records the loops' events on the host (package controlplane wires
// one).
//
// # Reading at scale: CachedReader and OnMemberChange
//
// Loops that read every member object of a type on every pass, like status collection, would
// send one request per object, cluster and pass. [ClusterSet.CachedReader] instead returns a
// [federation.Reader] served by an informer per (cluster, resource). It watches only the
// objects federations manage: those carrying the label federation.k8s.io/managed-by,
// whatever its value ([ManagedSelector]). So two federations sharing a fleet share the
// caches, and each loop keeps to its own value. The informers start on first use within
// [ClusterSet.Run] and stop with it, or when their cluster's client is rebuilt or released.
// Writes always go to the API server through [ClusterSet.Client].
//
// [ClusterSet.OnMemberChange] registers a function called with the cluster and object on
// every change those informers see. That covers every cluster, including informers started
// after the call, until the returned func removes it. Loops use it to requeue the federated
// object a member object belongs to when it drifts, is deleted or reports status:
//
//	remove := set.OnMemberChange(deploymentsGVR, func(cluster string, obj *unstructured.Unstructured) {
//		queue.Add(ownerKey(obj)) // quick and non-blocking: it runs on the informer's goroutine
//	})
//	defer remove()
//
// Each call gets its own copy of the object. A handler that only reads it (labels, name,
// resourceVersion) registers with [ClusterSet.OnMemberChangeReadOnly] instead. It gets the
// informer's object itself, with no copy per change, and must not modify nor keep it.
//
// An informer keeps serving its last state when its member is cut off.
// [ClusterSet.CacheHealth] says whether it is still in contact. It is nil while its lists and
// watches succeed, else their error and when it last heard from the member.
//
// # Goroutines and time
//
// Only Run starts goroutines (workers, informers), and it joins them all before it returns.
// Retry backoff and the cache sync timeout run on [ClusterSetOptions].Clock. Logs go to
// [ClusterSetOptions].Logger, a logr.Logger whose zero value discards.
//
// [package hostcache]: https://pkg.go.dev/github.com/fedkit/fedkit/hostcache
package kube
