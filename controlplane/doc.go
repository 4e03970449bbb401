// Package controlplane runs every fedkit loop together, in one call: the optional composition
// that turns fedkit's packages into a federation control plane, like KubeFed's controller
// manager or karmada-controller-manager, but inside the embedder's own process.
//
//	host, clusters, err := kube.ConnectKubeconfig("", "host", kube.ClusterSetOptions{Logger: log})
//	cp, err := controlplane.New(host, clusters, controlplane.Options{Logger: log, Registerer: reg})
//	err = cp.Run(ctx) // until ctx is done
//
// # When to use it, and when not
//
// Use it when you want the whole federation: the cluster monitor keeping Cluster status true,
// and for each federated type the scheduler (status.schedule), sync (the member objects) and
// the status collector (status.clusters, Ready), plus the DNS loop. [New] builds each loop with
// its package's own constructor and [Options]; [ControlPlane.Run] runs them all and joins them.
//
// Use the loops' packages instead when you want only some of them, or want to drive them from
// your own machinery: every loop has its own New, a one-pass Reconcile(ctx, key) and a
// Run(ctx) error that a controller-runtime manager can run as a RunnableFunc. The control plane
// adds nothing a loop needs; it is a convenience, not a framework. [Options].Disable switches
// off single loops (no DNS, a cluster monitor you run elsewhere).
//
// # What Run runs
//
// One scheduler, one Syncer and one Collector per type of [Options].Types (every built-in type
// by default, federation.BuiltinTypes), one ClusterMonitor, one DNS Controller, and the
// ClusterSet's own Run when it has one: a kube.ClusterSet must run to keep its member clients
// in line with the Cluster objects and to host the member caches the loops read; a
// fake.Fleet's Run drives its simulated workload controllers. Options' common fields (Clock,
// Logger, Registerer, Events, Identity) reach every loop whose own options leave them unset.
//
// # A type whose CRD is missing
//
// A host need not serve every federated type: a platform team installs the CRDs of the types
// it federates. Before starting the loops, Run lists (limit 1) each resource they watch; a loop
// whose resource the host does not serve is not started. It is reported in
// [ControlPlane.Status] as [StateFailed] with an error wrapping [ErrNotServed] that names the
// resource, and logged once; the other loops run. Every [Options].RetryPeriod (a minute by
// default) it is checked again, so installing the CRD later brings its loops up without a
// restart.
//
// The check cannot catch everything (a CRD deleted while the loops start, RBAC that forbids
// the list): a loop that cannot list what it watches fails after its CacheSyncTimeout with an
// error wrapping [ErrCacheNotSynced], and is reported and retried the same way. Only when every
// loop has failed at once (a host with none of fedkit's CRDs, a wrong kubeconfig context) does
// Run give up and return an error wrapping [ErrAllFailed] with each loop's reason, so the
// process exits and is restarted, as with a controller-runtime manager whose cache cannot
// sync.
//
// # Events
//
// The loops record Kubernetes events on the objects they act on (sync: created, updated,
// deleted in a cluster, drift corrected, failures). With [Options].Events nil, Run starts a
// client-go record.EventBroadcaster that writes them to the host as core/v1 Events through a
// kube.EventSink, so `kubectl describe federateddeployment web` shows them, and shuts it down
// before it returns. Give your own recorder (a controller-runtime manager's
// GetEventRecorderFor) in Options.Events, or set Disable.Events to record none.
//
// # Goroutines, time and errors
//
// New starts nothing and contacts nothing. Run starts every goroutine (the loops', the
// broadcaster's) and joins them before it returns. Time comes from [Options].Clock, so a test
// drives a whole control plane on a fake clock (see the package's tests); client-go's
// broadcaster alone stamps events with the wall clock. Errors are prefixed "controlplane: "
// and name the loop; sentinels are matched with errors.Is.
//
// Leader election and sharding, for running several replicas of the control plane, will be
// options of this package; until then run one replica.
//
// # Testing with package fake
//
// The fake host and fleet serve every loop, so a whole control plane runs in a unit test: see
// the package example. Run detects the fleet's Run and drives its simulated controllers too.
package controlplane
