package kube

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/hostcache"
)

// Defaults used when the corresponding Options field is zero.
const (
	// DefaultUserAgent identifies fedkit in API server audit logs.
	DefaultUserAgent = "fedkit"

	// DefaultDiscoveryTimeout bounds discovery requests (RESTMapping), which client-go cannot
	// cancel with a context, and /readyz and /version probes (Healthy, ServerVersion), which
	// also honour the caller's context.
	DefaultDiscoveryTimeout = 30 * time.Second

	// DefaultNamespace is where a ClusterSet looks for the Secrets named by
	// Cluster.spec.secretRef.
	DefaultNamespace = federation.DefaultNamespace

	// DefaultWorkers is how many Clusters Run reconciles at once. Reconciling a Cluster does no
	// I/O to the member (clients connect lazily), so few are needed.
	DefaultWorkers = 2

	// DefaultCacheSyncTimeout is how long ClusterSet.Run waits for its first lists of Clusters
	// and Secrets before it gives up with an error, as controller-runtime does.
	DefaultCacheSyncTimeout = 2 * time.Minute
)

// Options configures a Client. The zero value is valid: every field has a documented default.
type Options struct {
	// QPS and Burst set a client-side rate limit (a token bucket) when QPS is positive; a
	// negative QPS turns it off. When both the Options and the rest.Config leave them at zero,
	// there is none, as in controller-runtime since v0.21 and as SIG API Machinery advises:
	// the API server's Priority and Fairness protects it, and a client-side limit shared by
	// every loop of a control plane (the host client is) was fedkit's bottleneck: at the old
	// default of 50 QPS, about 8 host writes per new federated object capped propagation near
	// 7 objects a second on real servers. client-go's own zero-value default (5 QPS) would be
	// ten times worse. Sync's per-cluster write limit (fedsync.Options.ClusterQPS) is off by
	// default too.
	QPS   float32
	Burst int

	// UserAgent overrides the rest.Config's user agent when non-empty; when both are empty it
	// is DefaultUserAgent.
	UserAgent string

	// DiscoveryTimeout bounds each discovery request and health or version probe. Zero means
	// DefaultDiscoveryTimeout.
	DiscoveryTimeout time.Duration

	// Dynamic, when set, is the dynamic client every request goes through, instead of one
	// New builds from a rest.Config; New's cfg must then be nil. It adapts any
	// dynamic.Interface, client-go's dynamic fake included, which is handy in unit tests and
	// examples that need no server. Such a Client has no discovery: Healthy, ServerVersion
	// and RESTMapping return an error wrapping ErrNoDiscovery. QPS, Burst, UserAgent and
	// DiscoveryTimeout do not apply to it.
	Dynamic dynamic.Interface
}

func (o *Options) complete() error {
	if o.Burst < 0 {
		return fmt.Errorf("%w: Burst must not be negative", ErrInvalidConfig)
	}
	if o.DiscoveryTimeout < 0 {
		return fmt.Errorf("%w: DiscoveryTimeout must not be negative", ErrInvalidConfig)
	}
	if o.DiscoveryTimeout == 0 {
		o.DiscoveryTimeout = DefaultDiscoveryTimeout
	}
	return nil
}

// ClusterSetOptions configures a ClusterSet. The zero value is valid: every field has a
// documented default.
type ClusterSetOptions struct {
	// Namespace on the host holds the Secrets named by Cluster.spec.secretRef. Empty means
	// DefaultNamespace ("fedkit-system").
	Namespace string

	// Client configures every member client: QPS and Burst are per cluster, so one slow or
	// busy member cannot use up the budget of the others.
	Client Options

	// Workers is how many Clusters Run reconciles concurrently. Zero means DefaultWorkers.
	Workers int

	// Clock drives Run's retry backoff. Nil means the real clock; tests pass a
	// k8s.io/utils/clock/testing.FakeClock.
	Clock clock.WithTicker

	// Logger receives the set's logs: clients built and released, Clusters that are not ready
	// and why, Run's list and watch failures. It never receives credentials. The zero Logger
	// discards everything.
	Logger logr.Logger

	// CacheSyncTimeout bounds how long Run waits for its first lists of Clusters and Secrets
	// (on Clock) before it returns an error naming what it could not list. Zero means
	// DefaultCacheSyncTimeout.
	CacheSyncTimeout time.Duration

	// Registerer receives the metrics of Run's work queue (workqueue_*, controller_runtime_*,
	// queue name "kube/clusterset"; see METRICS.md), as every loop's. Nil means no metrics.
	Registerer prometheus.Registerer

	// Cache is the host informer cache Run adds its handlers to, shared with the other loops
	// given it (see package hostcache); its owner runs it. nil: Run keeps a cache of its own.
	Cache *hostcache.Cache
}

func (o *ClusterSetOptions) complete() error {
	if err := o.Client.complete(); err != nil {
		return err
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Workers < 0 {
		return fmt.Errorf("%w: Workers must not be negative", ErrInvalidConfig)
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.CacheSyncTimeout < 0 {
		return fmt.Errorf("%w: CacheSyncTimeout must not be negative", ErrInvalidConfig)
	}
	if o.CacheSyncTimeout == 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}
