package fake

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/intern"
)

// Compile-time checks that a Cluster is a complete client, with the optional capabilities.
var (
	_ federation.ClusterClient           = (*Cluster)(nil)
	_ federation.HealthChecker           = (*Cluster)(nil)
	_ federation.VersionGetter           = (*Cluster)(nil)
	_ federation.ResourceDiscoverer      = (*Cluster)(nil)
	_ federation.CredentialsExpiryGetter = (*Cluster)(nil)
	_ federation.CustomMetricsGetter     = (*Cluster)(nil)
)

// defaultWatchHistory is how many events a cluster keeps for watches that resume from an old
// resourceVersion. The real API server keeps a time window (etcd compaction, ~5 minutes); a
// count is easier to reason about in tests.
const defaultWatchHistory = 1024

// Cluster is one in-memory Kubernetes API: a member cluster or the federation host. It
// implements [federation.ClusterClient], [federation.HealthChecker],
// [federation.VersionGetter] and [federation.ResourceDiscoverer]. Create one with
// [NewCluster], [NewHost] or [Fleet.Add].
//
// A zero Cluster is a valid cluster named "", as from NewCluster(""). Every method is
// safe for concurrent use. Configuration setters (SetClock, SetHooks, FailOn,
// ...) take effect for calls that start after they return.
type Cluster struct {
	name string

	mu      sync.Mutex
	clock   clock.WithTicker
	rng     *rand.Rand
	version version.Info
	res     resourceConfig

	// Storage. Stored objects are never mutated in place: every write stores a fresh copy, so
	// the watch history can share them.
	rv      int64
	objects map[schema.GroupVersionResource]map[objectKey]*unstructured.Unstructured
	served  map[schema.GroupVersionResource]resourceInfo // built-ins and CRDs' resources
	hist    history
	watch   map[*watcher]struct{}
	// intern shares equal parts of stored objects, with the other members of the fleet for
	// a member, while interning is on (SetInterning). A fleet holds the same object in many
	// members (equal labels, annotations and data), and the host's federated objects repeat
	// the same per-cluster status entries. Stored objects are never mutated (see objects), so
	// at commit the store replaces each flat map of an object by an equal one it already
	// holds (internal/intern). Nothing a client sees changes: every read, watch event and
	// notification is a copy.
	intern    *intern.Table
	interning bool

	// Recording and injection.
	actions     []Action
	counts      map[Verb]int
	unrecorded  bool
	hooks       Hooks
	faults      map[Verb]*fault
	partitioned bool
	readySince  time.Time
	// credentialsExpiry is when the credentials a client of this cluster holds expire (zero:
	// unknown); see SetCredentialsExpiry.
	credentialsExpiry time.Time

	// Simulated controllers.
	sim simulation

	// metrics is what the metrics APIs serve (SetPodMetrics, ...); nil: none is served.
	metrics *metricsState

	// Member caches (see Fleet.CachedReader): the fleet the cluster is a member of, the
	// started caches, and the change notifications unlock delivers.
	fleet      *Fleet
	caches     map[schema.GroupVersionResource]*memberCache
	pending    []change
	delivering bool
}

// objectKey addresses an object within one resource.
type objectKey struct{ namespace, name string }

// NewCluster returns a cluster named name, using the real clock, with no faults and no
// simulated controllers. It serves the built-in resources of Kubernetes 1.37 and holds the
// namespaces default, kube-system, kube-public and kube-node-lease (resourceVersions 1 to 4),
// as a new real cluster does. It starts no goroutines. Seed objects with [Cluster.Seed];
// serve custom resources by creating their CustomResourceDefinitions, or use [NewHost].
func NewCluster(name string) *Cluster {
	c := &Cluster{name: name}
	c.initLocked() // nobody else holds c yet
	return c
}

// lock takes c.mu and completes a zero Cluster, so that one is usable too.
func (c *Cluster) lock() {
	c.mu.Lock()
	if c.objects == nil {
		c.initLocked()
	}
}

// initLocked fills in the defaults. generateName suffixes and UIDs come from a source seeded
// with the cluster's name, so test runs are repeatable.
func (c *Cluster) initLocked() {
	h := fnv.New64a()
	_, _ = h.Write([]byte(c.name))
	seed := h.Sum64()
	c.clock = clock.RealClock{}
	c.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c.version = defaultVersion()
	c.objects = map[schema.GroupVersionResource]map[objectKey]*unstructured.Unstructured{}
	c.served = builtinServed()
	c.watch = map[*watcher]struct{}{}
	c.faults = map[Verb]*fault{}
	c.hist.limit = defaultWatchHistory
	c.intern = &intern.Table{}
	c.readySince = c.clock.Now()
	c.seedNamespacesLocked()
}

func defaultVersion() version.Info {
	return version.Info{
		Major: "1", Minor: "37", GitVersion: "v1.37.2-fake",
		GoVersion: "go1.26", Compiler: "gc", Platform: "linux/amd64",
	}
}

// Name returns the name the cluster was created with.
func (c *Cluster) Name() string { return c.name }

// SetClock sets the clock behind creationTimestamp, deletionTimestamp, latency and the
// simulated controllers; nil restores the real clock. Tests pass a
// k8s.io/utils/clock/testing.FakeClock and Step it.
func (c *Cluster) SetClock(clk clock.WithTicker) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	c.lock()
	defer c.mu.Unlock()
	c.clock = clk
	c.readySince = clk.Now()
}

// SetNamespaced overrides whether a resource is namespaced. By default the scope is the one
// the real server has for a built-in resource, and the CRD's spec.scope for a custom
// resource, so this is rarely needed. Set it before storing objects of gr.
func (c *Cluster) SetNamespaced(gr schema.GroupResource, namespaced bool) {
	c.lock()
	defer c.mu.Unlock()
	setOverride(&c.res.namespaced, gr, namespaced)
}

// SetStatusSubresource overrides whether a resource has a status subresource. By default a
// built-in resource has one when the real API server serves its /status (pods, services,
// namespaces, nodes, the apps workloads, jobs, ingresses, ...; not configmaps, secrets,
// serviceaccounts or RBAC objects), and a custom resource when its CRD's version declares
// subresources.status, so this is rarely needed.
func (c *Cluster) SetStatusSubresource(gr schema.GroupResource, enabled bool) {
	c.lock()
	defer c.mu.Unlock()
	setOverride(&c.res.status, gr, enabled)
}

// SetUnconditionalUpdate overrides whether an Update or UpdateStatus of gr may omit
// metadata.resourceVersion. By default most built-in types allow it, and custom resources,
// CRDs, APIServices, Leases, PodDisruptionBudgets, admission configurations and a few other
// built-ins refuse it with 422 Invalid, as their real strategies do. Declare here the
// resources of an aggregated API server that allows it.
func (c *Cluster) SetUnconditionalUpdate(gr schema.GroupResource, allowed bool) {
	c.lock()
	defer c.mu.Unlock()
	setOverride(&c.res.unconditional, gr, allowed)
}

// setOverride sets (*m)[gr], making the map when it is nil.
func setOverride(m *map[schema.GroupResource]bool, gr schema.GroupResource, v bool) {
	if *m == nil {
		*m = map[schema.GroupResource]bool{}
	}
	(*m)[gr] = v
}

// SetServerVersion sets what ServerVersion returns (default v1.37.2-fake).
func (c *Cluster) SetServerVersion(v version.Info) {
	c.lock()
	defer c.mu.Unlock()
	c.version = v
}

// SetWatchHistory sets how many events the cluster keeps for watches that resume from an old
// resourceVersion (default 1024). Older resourceVersions get 410 Expired. n < 1 means 1.
func (c *Cluster) SetWatchHistory(n int) {
	c.lock()
	defer c.mu.Unlock()
	c.hist.resize(max(n, 1))
}

// ResourceVersion returns the cluster's current resourceVersion: the number of writes so far,
// the four initial namespaces included.
func (c *Cluster) ResourceVersion() int64 {
	c.lock()
	defer c.mu.Unlock()
	return c.rv
}

// Healthy implements [federation.HealthChecker]: nil unless the cluster is partitioned or a
// fault is injected for [VerbHealth].
func (c *Cluster) Healthy(ctx context.Context) error {
	_, err := c.begin(ctx, Action{Verb: VerbHealth})
	return err
}

// ServerVersion implements [federation.VersionGetter]. It fails like Healthy when the cluster
// is partitioned or a fault is injected for [VerbVersion].
func (c *Cluster) ServerVersion(ctx context.Context) (*version.Info, error) {
	if _, err := c.begin(ctx, Action{Verb: VerbVersion}); err != nil {
		return nil, err
	}
	c.lock()
	defer c.mu.Unlock()
	v := c.version
	return &v, nil
}

// CredentialsExpiry implements [federation.CredentialsExpiryGetter]: the time
// [Cluster.SetCredentialsExpiry] set, ok false while none is set.
func (c *Cluster) CredentialsExpiry() (time.Time, bool) {
	c.lock()
	defer c.mu.Unlock()
	return c.credentialsExpiry, !c.credentialsExpiry.IsZero()
}

// SetCredentialsExpiry makes the cluster's client report that its credentials expire at t
// (the zero time: it cannot tell), as a client holding a ServiceAccount token or a client
// certificate does. The fake accepts requests after that time all the same: to have a member
// refuse expired credentials, inject an Unauthorized fault.
func (c *Cluster) SetCredentialsExpiry(t time.Time) {
	c.lock()
	defer c.mu.Unlock()
	c.credentialsExpiry = t
}

// nowLocked returns the cluster clock's time, truncated to seconds as metav1.Time serialises it.
// Callers hold c.mu.
func (c *Cluster) nowLocked() time.Time {
	return c.clock.Now().Truncate(time.Second)
}
