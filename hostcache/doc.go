// Package hostcache is the host informer cache that fedkit's loops share within one process.
//
//	c, err := hostcache.New(host, hostcache.Options{Logger: log})
//	s, err := scheduler.New(host, typ, scheduler.Options{Cache: c})
//	y, err := fedsync.New(host, clusters, typ, fedsync.Options{Cache: c})
//	go c.Run(ctx)                      // stops the informers when ctx is done
//	go s.Run(ctx); go y.Run(ctx)
//
// It follows the client-go and controller-runtime idiom: one informer per host resource,
// whichever loops and shards read it. This is the one explanation of the shared host cache;
// the loops' Options.Cache fields link here.
//
// Without it every loop keeps its own. A default control plane would watch the Clusters
// dozens of times and keep a copy of every federated object per loop. So create one Cache,
// hand it to every loop through its Options.Cache, and run it for as long as the loops run.
//
// A loop whose Options.Cache is nil keeps a Cache of its own, so embedding one loop stays one
// New. controlplane makes one Cache per process and shares it between all its loops and
// shards. Pass it your own in controlplane.Options.Cache to share it further (with a
// kube.ClusterSet's Run, say).
//
// # Rules
//
// Loops add their event handlers when their Run starts, and remove them when it returns.
// They share the informer's one client-go handler, so a loop costs an informer no goroutine.
// An informer lives while a loop uses it. The first loop to ask for it builds and starts it; the
// last one to leave stops it. So a resource whose CRD is missing is listed afresh when its
// loop is retried.
//
// Sources share an informer when they watch the same resource, namespace and label selector
// with the same transform. A source that trims its objects never shares an informer with one
// that keeps them whole (federation/kube's Secrets are kept without their data). Every
// informer drops metadata.managedFields, which no loop reads, and holds equal flat maps
// (labels, per-cluster status entries) as one map, shared across objects. Clusters are decoded once per
// uid and resourceVersion for every loop of the Cache (Cache.DecodeCluster).
//
// Cache.Run(ctx) runs the informers until ctx is done, and returns once they have stopped.
// Stop the loops first. Cache.Synced(gvr) says whether the informers the loops use for a
// resource have listed: controlplane's Ready asks it for what each running loop needs.
package hostcache
