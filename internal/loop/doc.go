// Package loop is the one engine behind every fedkit loop's Run.
//
//	l, err := loop.New(host, []loop.Source{
//		{GVR: typ.FederatedGVR()},                                              // own key
//		{GVR: federation.ReplicaSchedulingPreferenceGVR},                       // same name
//		{GVR: federation.ClusterGVR, Broadcast: true, Changed: loop.ClusterChanged}, // everyone
//	}, loop.Options{Name: "scheduler/FederatedDeployment", Clock: clk, Logger: log})
//	cached := l.Reader()
//	err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
//		return s.reconcileFrom(ctx, cached, key) // the same code Reconcile runs on the host
//	}))
//
// The scheduler, sync, status, DNS and federation/kube's ClusterSet all run on it. Informers
// on the host turn changes into keys, through any federation.ClusterClient, the fake
// included. A rate-limited work queue deduplicates them. Workers call the loop's one-pass
// Reconcile. It imports only package federation from fedkit, so every loop package,
// federation/kube included, can use it.
//
// # Using it
//
// A loop type declares what it watches as Sources and builds a Loop, as above. It runs its
// reconcile code with the Loop's Reader, so the reads of a pass come from the informers the
// Loop keeps anyway. The loop type's exported Reconcile keeps reading the host itself: an
// embedder who drives Reconcile from its own machinery has no informers to read from.
//
// # From changes to keys
//
// Each Source says how a change of one of its objects becomes keys:
//
//   - the object's own namespace and name;
//   - Keys, a function of the object;
//   - Broadcast, every object of the first source (a Cluster concerns every federated
//     object);
//   - Referrers, the objects of another source that refer to it, found in that source's
//     cache (a Secret concerns the Clusters whose spec.secretRef names it).
//
// Changed filters updates. ClusterChanged lets a Cluster's heartbeat through without
// reconciling anything. At 10,000 objects and 1,000 clusters, every beat would otherwise cost
// 10,000 reconciles. Transform trims objects before they are stored: a Secret's data, which
// the loop must not keep in memory.
//
// # Sharding
//
// This is the one explanation of the shard filter. With Options.Shard set, Run reconciles
// only the keys the shard owns (federation.Shard.Owns). A key it does not own is dropped in
// front of the work queue, whatever produced it: an event, a Broadcast, Referrers, Enqueue,
// a requeue. So N loops with the shards 0 to N-1 reconcile every key exactly once between
// them. Each still reads every object, since a pass reads more than its own key; given one
// Cache, they share its informers. The Reconciler is not filtered when called directly.
//
// # One cache per process
//
// A Cache holds the host informers. [package hostcache] exports it and states its rules:
// one informer per resource, namespace, LabelSelector and TransformName, handlers added and
// removed with Run, the last loop to leave an informer stopping it. Options.Cache shares one
// Cache between loops, and controlplane makes one per process; nil gives Run a Cache of its
// own. Run waits for its own handlers, not just the informers, to have seen the first list.
// An informer has one client-go handler, which hands each change to the loops' handlers in
// turn; a handler added late is handed the store first, as client-go would. client-go gives
// each handler two goroutines and a buffer; the loops' handlers only enqueue keys.
// A Transform without a TransformName is never shared, so a trimmed Secret informer never
// serves whole Secrets, nor the reverse. Dropping metadata.managedFields is safe: an update
// without them keeps them. Equal flat maps of stored objects (labels, per-cluster status
// entries) are one map for all informers of a Cache (internal/intern): stored objects are
// never changed, and readers get copies. Clusters are decoded once per uid and
// resourceVersion for all loops of a Cache (DecodeCluster). A loop lists them through
// Clusters, which decodes once per resourceVersion with any other reader too.
//
// # Reading from the caches
//
// Loop.Reader serves Get and List from a source's informer while Run runs and after its
// caches synced. It does so when the source holds whole objects of the resource and
// namespace asked for: no LabelSelector, no Transform. Everything else goes to the host. A
// pass in Run therefore costs no reads.
//
// Cached objects may lag the host. Writes stay live and carry the resourceVersion that was
// read. So a write based on stale data fails with a Conflict, which the loop retries quietly.
// Objects returned are the caller's own. GetFromCache and ListFromCache are the same reads
// over any informer, for federation/kube's member caches.
//
// A caller that only reads an object (a Cluster's Ready condition, the Clusters it decodes, a
// member object's status) reads it without the copy: View and ViewList return the cache's own
// objects, which the caller must not change, when the reader is a Viewer (Loop.Reader,
// federation/kube's cached readers; ViewFromCache and ViewListFromCache over any informer),
// and Get's or List's copies otherwise. A wrapper that changes only one resource's reads
// (federation.PendingReader) says so through ReaderFor, so that what the reader behind it
// offers for the other resources (Viewer, ClusterDecoder, CacheVersion) is not hidden.
//
// # Results and errors
//
// The rules every loop documents come from here:
//
//   - a nil error and a zero Result forget the key until something changes;
//   - Result.RequeueAfter brings the key back after that long (on the injected clock);
//   - an error wrapped by federation.Terminal is logged and the key is forgotten until its
//     object (or a related one) changes;
//   - a Conflict is retried with backoff and logged at V(1) only: it is how optimistic
//     concurrency says "read again";
//   - any other error is logged and the key retried with exponential backoff.
//
// # Metrics and logs
//
// With Options.Registerer set, the queue reports client-go's work queue metrics in
// controller-runtime's families, labelled name and controller with the queue's name
// (Options.Name): workqueue_depth, _adds_total, _queue_duration_seconds,
// _work_duration_seconds, _unfinished_work_seconds, _longest_running_processor_seconds,
// _retries_total. They go through a workqueue.MetricsProvider given to this queue only.
// client-go's SetProvider is process-wide, and a library must not take it from its embedder.
// The worker that takes a key counts it as controller-runtime's controller counts a request:
// controller_runtime_reconcile_total{controller,result}, _reconcile_errors_total,
// _terminal_reconcile_errors_total, _reconcile_time_seconds, _active_workers and
// _max_concurrent_reconciles. Pass.Run records each pass in fedkit_reconciles_total instead: a
// key can be several passes, and a pass can be driven by another queue. The gauges are deleted
// when Run returns, so a loop that stops (a lost leader election) shows no stale depth.
//
// The engine's own log lines name the queue and the object. Each pass gets a ctx whose logger
// names the queue. Pass.Run is every loop's one reconcile wrapper. It adds the loop, type and
// key to the ctx logger (the only way a pass gets one), times the pass and records its
// outcome label. [Event] records a pass's event and logs it with that logger (warnings at
// V(0)). Source.Deleted lets a loop forget what it keeps about a deleted object outside its
// passes, such as the metrics series of a Cluster that left.
//
// # Starting and stopping
//
// Run waits until every source's handler has seen its informer's first list before it
// takes keys. Workers start on demand, up to Options.Workers, and exit when no key waits: an
// idle loop holds only Run's own goroutine, which feeds the queue's keys to the workers. A list or watch failure reaches
// Options.Logger with the loop's name and the resource. (client-go retries refused
// connections of a watch without reporting them, as every informer does.) A source may not
// have listed within Options.CacheSyncTimeout (two minutes by default, on Options.Clock).
// Then Run stops and returns an error wrapping ErrCacheNotSynced that names the resource and
// its last error. So a host without a loop's CRD fails loudly instead of stalling.
//
// When ctx is done, workers finish the reconcile in hand and take no more keys. The queue is
// dropped, not drained with a dead context. Run returns after every goroutine it started has
// exited.
//
// [package hostcache]: https://pkg.go.dev/github.com/fedkit/fedkit/hostcache
package loop
