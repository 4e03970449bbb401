package scheduler

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
	"github.com/fedkit/fedkit/placement"
)

// Defaults of [Options].
const (
	// DefaultWorkers is how many objects Run schedules in parallel: a pass mostly waits on
	// its status write, and with 2 a burst of 1,000 new objects waited 7.5s on average in
	// the queue on real servers (SCALE.md).
	DefaultWorkers = 8
	// DefaultCacheSyncTimeout bounds Run's wait for its first lists.
	DefaultCacheSyncTimeout = loop.DefaultCacheSyncTimeout
)

// Options configure a [Scheduler]. The zero value is the documented default for every field.
type Options struct {
	// Clock stamps condition transitions and drives Run's requeues and backoff. Default: the
	// real clock.
	Clock clock.WithTicker

	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger

	// Registerer receives the scheduler's metrics (fedkit_reconciles_total and
	// fedkit_reconcile_duration_seconds with loop="scheduler", fedkit_scheduler_*, and Run's
	// work queue, workqueue_*, controller_runtime_*; see METRICS.md). nil: no metrics.
	Registerer prometheus.Registerer

	// Cache is the host informer cache Run adds its handlers to, shared with the other loops
	// given it (see package hostcache); its owner runs it. nil: Run keeps a cache of its own.
	Cache *hostcache.Cache

	// Events records events on the federated objects when their schedule changes
	// (ScheduleChanged) and when they turn unschedulable or invalid (a Warning with the
	// Scheduled condition's reason), never on a pass that changed nothing. nil: none.
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

	// Workers is how many objects Run schedules in parallel. Default: [DefaultWorkers] (8).
	Workers int

	// CacheSyncTimeout bounds how long Run waits for the first list of the federated objects,
	// preferences and Clusters before it returns an error naming the resource that could not
	// be listed (a CRD missing on the host, say). It runs on Clock. Default:
	// [DefaultCacheSyncTimeout] (2 minutes).
	CacheSyncTimeout time.Duration

	// RejectUnknownClusters makes a cluster name that no Cluster has, in the object's
	// spec.placement.clusters or among its ReplicaSchedulingPreference's spec.clusters, an
	// error instead of a warning: Scheduled=False with reason ReasonUnknownCluster, a
	// message naming the field and the cluster, the last good schedule kept, and a terminal
	// error from Reconcile (Run reschedules every object when a Cluster appears). Default
	// false: as in KubeFed, the name is skipped, the others are scheduled, and the Scheduled
	// message warns about it.
	RejectUnknownClusters bool

	// Disruption says when the fleet counts as disrupted: every cluster lost, or a large
	// share of it lost together (placement.FleetDisruption), the control plane's own outage.
	// While it is, a lost cluster keeps its replicas (no eviction for readiness) and gets no
	// new ones. Give the cluster monitor the same (package controlplane does). Default: the
	// zero placement.DisruptionOptions (55% of the fleet and at least 3 clusters lost within
	// 5 minutes, or every cluster).
	Disruption placement.DisruptionOptions
}

// complete fills in defaults.
func (o *Options) complete() {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
}

// Scheduler is the loop that writes each federated object's status.schedule: which clusters
// it goes to (package placement) and how many replicas each gets ([Divide], steered by the
// object's ReplicaSchedulingPreference), with the reasons in the Scheduled condition.
//
// Reconcile is one pass over one object; Run watches the host and calls it. A Scheduler is
// safe for concurrent use.
type Scheduler struct {
	host    federation.ClusterClient
	typ     federation.TypeConfig
	opts    Options
	metrics *metrics

	// clusterList decodes each Cluster once per resourceVersion: a pass over an unchanged
	// fleet decodes none (a pass runs for every write any loop makes to the object, and
	// decoding the Clusters was most of a pass's CPU).
	clusterList loop.Clusters
}

// New returns a Scheduler for the federated type of typ, reading and writing through host.
// It starts nothing: call [Scheduler.Reconcile] or [Scheduler.Run]. It returns an error when
// host is nil, typ is incomplete, an option is invalid (wrapping [ErrInvalidOptions]), or the
// metrics cannot be registered.
func New(host federation.ClusterClient, typ federation.TypeConfig, opts Options) (*Scheduler, error) {
	if host == nil {
		return nil, errors.New("scheduler: New: host client is nil")
	}
	if err := typ.Validate(); err != nil {
		return nil, fmt.Errorf("scheduler: New: %w", err)
	}
	if err := loop.ValidateShard(ErrInvalidOptions, opts.Shard); err != nil {
		return nil, fmt.Errorf("scheduler: New: %w", err)
	}
	if err := opts.Disruption.Validate(); err != nil {
		return nil, fmt.Errorf("scheduler: New: %w: Disruption: %w", ErrInvalidOptions, err)
	}
	opts.complete()
	m, err := newMetrics(opts.Registerer, typ.Federated.Kind)
	if err != nil {
		return nil, fmt.Errorf("scheduler: New: %w", err)
	}
	return &Scheduler{host: host, typ: typ, opts: opts, metrics: m}, nil
}
