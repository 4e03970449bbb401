package hostcache

import (
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Cache is the shared host informer cache (see the package documentation). Its methods:
// Run(ctx) error runs its informers until ctx is done; DecodeCluster(u) returns a Cluster
// decoded once per uid and resourceVersion, shared by its callers, who must not change it;
// Synced(gvr) reports whether the informers the loops use for gvr have listed (a readiness
// check: false before a loop asks for gvr and while the Cache does not run).
type Cache = loop.Cache

// Options configure a Cache. The zero value is usable: Logger receives the failures of
// informers no loop uses at that moment (the loops' own loggers receive the others).
type Options = loop.CacheOptions

// New returns a Cache of host. It starts nothing; Run starts it.
func New(host federation.ClusterClient, opts Options) (*Cache, error) {
	return loop.NewCache(host, opts)
}
