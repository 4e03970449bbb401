package status

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/loop"
)

// Defaults of [Options].
const (
	// DefaultStaleAfterPeriods is StaleAfter in periods: an observation survives two missed
	// pulls and goes stale on the third.
	DefaultStaleAfterPeriods = 3
	// DefaultReadTimeout bounds one member read.
	DefaultReadTimeout = 10 * time.Second
	// DefaultMaxRemoteStatusBytes bounds one cluster's status.clusters[].remoteStatus.
	DefaultMaxRemoteStatusBytes = 4096
	// DefaultClusterConcurrency bounds the live member reads of one pass.
	DefaultClusterConcurrency = 16
	// DefaultWorkers is how many objects Run collects in parallel: a pass mostly waits on its
	// status write, and with 2 a burst of 1,000 new objects waited 7.5s on average in the
	// queue on real servers (SCALE.md).
	DefaultWorkers = 8
	// DefaultPeriod is how often each object's members are pulled.
	DefaultPeriod = federation.DefaultStatusPollInterval
	// DefaultCacheSyncTimeout bounds Run's wait for its first lists (the Collector's and the
	// ClusterMonitor's).
	DefaultCacheSyncTimeout = loop.DefaultCacheSyncTimeout
	// conflictRetries bounds how often one pass re-reads and re-applies after a Conflict.
	conflictRetries = 3
)

// Options configure a [Collector]. The zero value is the documented default for every field.
type Options struct {
	// Clock judges freshness, stamps lastObserved and condition transitions, times out
	// member reads and drives Run. Default: the real clock.
	Clock clock.WithTicker

	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger

	// Registerer receives the Collector's metrics: fedkit_reconciles_total and
	// fedkit_reconcile_duration_seconds with loop="status", fedkit_member_requests_total
	// (its live member reads), fedkit_status_stale_members, and Run's work queue
	// (workqueue_*, controller_runtime_*); see METRICS.md. nil: no metrics.
	Registerer prometheus.Registerer

	// Cache is the host informer cache Run adds its handlers to, shared with the other loops
	// given it (see package hostcache); its owner runs it. nil: Run keeps a cache of its own.
	Cache *hostcache.Cache

	// Events records events on the federated objects when their Ready condition changes
	// status or reason (with the condition's reason: Normal when it turns True, Warning
	// otherwise; not a new object's first NotReady) and when clusters go stale while it does
	// not (ClustersStale); never on a pass that changed neither. nil: none.
	Events federation.EventRecorder

	// StatusWriter, when set, takes the loop's status writes and merges them with the other
	// loops' writes to the same object (package controlplane sets one for the loops it runs);
	// the loop reads objects with the changes still pending. nil: the loop writes its status
	// itself, at once.
	StatusWriter federation.StatusWriter

	// Namespace restricts Run to federated objects in one namespace. Default: all.
	Namespace string

	// Shard restricts Run to the federated objects this shard owns ([federation.Shard.Owns]) when
	// several processes split the work (package controlplane can claim shards at run time through
	// Leases): Run drops every other key before it is queued, whether it comes from an event, a
	// Cluster change, a member change or a requeue. Reconcile itself is not filtered: an embedder
	// that calls it directly decides which keys it passes, and can use Shard.Owns for that.
	// Default: the zero Shard, which owns every key.
	Shard federation.Shard

	// Identity is the value of federation.ManagedByLabel on the member objects this
	// federation manages, as the Syncer's Options.Identity: a member object of the same name
	// that carries another value (or none) belongs to someone else and is not reported.
	// Default: federation.ManagedByValue.
	Identity string

	// Workers is how many objects Run collects in parallel. Default: [DefaultWorkers] (8).
	Workers int

	// Period is how often each object's members are pulled. Default: [DefaultPeriod]
	// (federation.DefaultStatusPollInterval, 30s).
	Period time.Duration

	// StaleAfter is how long a successful read of a member counts as fresh. Default:
	// [DefaultStaleAfterPeriods] periods (90s with the default Period).
	StaleAfter time.Duration

	// ReadTimeout bounds one member read, on Clock. Default: [DefaultReadTimeout].
	ReadTimeout time.Duration

	// Extractors adds to and overrides [DefaultExtractors] for the target kind; a nil entry
	// selects [GenericStatus]. Default: the default table.
	Extractors Extractors

	// MaxRemoteStatusBytes caps the JSON size of each status.clusters[].remoteStatus; a
	// larger one keeps only its conditions. Default: [DefaultMaxRemoteStatusBytes]; negative:
	// no cap.
	MaxRemoteStatusBytes int

	// CacheSyncTimeout bounds how long Run waits for the first list of the federated objects
	// and Clusters before it returns an error naming what could not be listed. It runs on
	// Clock. Default: [DefaultCacheSyncTimeout] (2 minutes).
	CacheSyncTimeout time.Duration

	// ClusterConcurrency bounds how many members one pass reads at once when it reads them
	// live (member caches are read one after the other: they answer from memory).
	// Default: [DefaultClusterConcurrency].
	ClusterConcurrency int
}

// complete validates o and fills in the defaults.
func (o *Options) complete() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Period", o.Period}, {"StaleAfter", o.StaleAfter}, {"ReadTimeout", o.ReadTimeout}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s must not be negative, got %s", ErrInvalidOptions, d.name, d.v))
		}
	}
	if o.Workers < 0 || o.ClusterConcurrency < 0 {
		errs = append(errs, fmt.Errorf("%w: Workers and ClusterConcurrency must not be negative", ErrInvalidOptions))
	}
	if err := loop.ValidateShard(ErrInvalidOptions, o.Shard); err != nil {
		errs = append(errs, err)
	}
	if o.Identity == "" {
		o.Identity = federation.ManagedByValue
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.Period == 0 {
		o.Period = DefaultPeriod
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = DefaultStaleAfterPeriods * o.Period
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.MaxRemoteStatusBytes == 0 {
		o.MaxRemoteStatusBytes = DefaultMaxRemoteStatusBytes
	}
	if o.ClusterConcurrency == 0 {
		o.ClusterConcurrency = DefaultClusterConcurrency
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	return nil
}

// Collector is the pull loop: it reads each federated object's member objects in the
// clusters its status.clusters lists, and writes their observed status, the sums in
// status.aggregated and the Ready condition (see the package documentation for the rules).
//
// Reconcile is one pass over one object; Run watches the host and the members and calls it.
// A Collector is safe for concurrent use.
type Collector struct {
	host      federation.ClusterClient
	clusters  federation.ClusterSet
	typ       federation.TypeConfig
	opts      Options
	extract   Extractor
	freshness *freshness
	metrics   *collectorMetrics
	rules     ruleEvents
}

// New returns a Collector for the federated type of typ, reading and writing federated
// objects through host and member objects through clusters (through its member caches when
// clusters implements federation.MemberCache). It starts nothing: call
// [Collector.Reconcile] or [Collector.Run]. It returns an error when host or clusters is
// nil, typ is incomplete, an option is invalid (wrapping [ErrInvalidOptions]), or the
// metrics cannot be registered.
func New(host federation.ClusterClient, clusters federation.ClusterSet, typ federation.TypeConfig, opts Options) (*Collector, error) {
	if host == nil {
		return nil, errors.New("status: New: host client is nil")
	}
	if clusters == nil {
		return nil, errors.New("status: New: cluster set is nil")
	}
	if err := typ.Validate(); err != nil {
		return nil, fmt.Errorf("status: New: %w", err)
	}
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("status: New: %w", err)
	}
	m, err := newCollectorMetrics(opts.Registerer, typ.Federated.Kind)
	if err != nil {
		return nil, fmt.Errorf("status: New: %w", err)
	}
	return &Collector{
		host:      host,
		clusters:  clusters,
		typ:       typ,
		opts:      opts,
		extract:   extractorFor(opts.Extractors, typ),
		freshness: newFreshness(),
		metrics:   m,
	}, nil
}
