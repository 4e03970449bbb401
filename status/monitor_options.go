package status

import (
	"cmp"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/loop"
	"github.com/fedkit/fedkit/placement"
)

// Defaults of [MonitorOptions].
const (
	DefaultProbePeriod       = 10 * time.Second
	DefaultProbeTimeout      = 3 * time.Second
	DefaultFailureThreshold  = 3
	DefaultSuccessThreshold  = 3
	DefaultHeartbeatInterval = time.Minute
	DefaultEvictionDelay     = 5 * time.Minute
	// DefaultMonitorWorkers is how many clusters Run probes in parallel.
	DefaultMonitorWorkers = 4
	// DefaultReadinessWindowDelays is ReadinessWindow in eviction delays.
	DefaultReadinessWindowDelays = 3
	// DefaultCredentialsWarning is how long before a member's credentials expire the
	// monitor warns.
	DefaultCredentialsWarning = 7 * 24 * time.Hour
)

// MonitorOptions configure a [ClusterMonitor]. The zero value is the documented default for
// every field.
type MonitorOptions struct {
	// Clock times probes, thresholds, heartbeats and the eviction delay. Default: the real
	// clock.
	Clock clock.WithTicker

	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger

	// Registerer receives the monitor's metrics: fedkit_reconciles_total and
	// fedkit_reconcile_duration_seconds with loop="cluster-monitor", its probes and reads in
	// fedkit_member_requests_total (probes with verb="probe"), fedkit_cluster_ready, and
	// Run's work queue (workqueue_*, controller_runtime_*); see METRICS.md. A deleted
	// Cluster's series go. nil: no metrics.
	Registerer prometheus.Registerer

	// Cache is the host informer cache Run adds its handlers to, shared with the other loops
	// given it (see package hostcache); its owner runs it. nil: Run keeps a cache of its own.
	Cache *hostcache.Cache

	// Events records an event on a Cluster when its Ready condition changes status, with
	// the condition's reason (ClusterReady as Normal; ClusterNotReady, ClusterUnreachable or
	// ClientUnavailable as Warning), never on a probe that changes nothing. nil: none.
	Events federation.EventRecorder

	// Workers is how many clusters Run probes in parallel. Default: [DefaultMonitorWorkers] (4).
	Workers int

	// Shard restricts Run to the Clusters this shard owns by name ([federation.Shard.Owns] of
	// Key{Name: cluster}) when several processes split the work (package controlplane can claim
	// shards at run time through Leases): Run drops every other key before it is queued, whether
	// it comes from an event, a Cluster change, a member change or a requeue. Reconcile itself is
	// not filtered: an embedder that calls it directly decides which keys it passes, and can use
	// Shard.Owns for that. Default: the zero Shard, which owns every key.
	Shard federation.Shard

	// Period is how often each cluster is probed. Default: [DefaultProbePeriod] (10s).
	Period time.Duration

	// Timeout bounds one probe, on Clock; a probe that takes longer counts as unreachable.
	// It bounds each of the reads that follow a probe as well (the version, every page of
	// the nodes and of the pods): a member that accepts a request and never answers holds a
	// worker for Timeout, and the other clusters are probed all the same.
	// Default: [DefaultProbeTimeout] (3s).
	Timeout time.Duration

	// FailureThreshold is how many consecutive failed probes turn Ready False: one lost
	// probe never flips a cluster. Default: [DefaultFailureThreshold] (3).
	FailureThreshold int

	// SuccessThreshold is how many consecutive successful probes turn Ready True again
	// (hysteresis: a cluster is trusted again only after a run of good probes). A cluster
	// that loses Ready again before it has held True for ReadinessWindow needs twice as
	// many the next time, up to eight times SuccessThreshold, so a member that answers now
	// and then flips a few times, not at every lucky probe. Default: [DefaultSuccessThreshold]
	// (3).
	SuccessThreshold int

	// HeartbeatInterval is the longest a ready cluster goes without a status write:
	// status.lastHeartbeatTime is refreshed (and the version, nodes and pods read again) at
	// most this often, and on every Ready transition. It must be shorter than
	// Disruption.Window: a Ready cluster not heard from within the window does not count
	// when the fleet's disruption is judged. Default: [DefaultHeartbeatInterval] (1m).
	HeartbeatInterval time.Duration

	// EvictionDelay is how long a cluster must have been not Ready, in all within
	// ReadinessWindow, before the not-ready and unreachable taints change from NoSchedule
	// (no new work) to NoExecute (placement takes the cluster's work away unless tolerated).
	// A cluster that flips does not start the count again at every flip. The time is what
	// this monitor observed on Clock, never a lastTransitionTime another replica wrote.
	// Default: [DefaultEvictionDelay] (5m).
	EvictionDelay time.Duration

	// ReadinessWindow is how far back the monitor remembers each cluster's readiness: the
	// not-ready time EvictionDelay counts, and how long Ready must hold before a flapping
	// cluster's SuccessThreshold is back to normal. It must not be shorter than
	// EvictionDelay. Default: [DefaultReadinessWindowDelays] times EvictionDelay (15m).
	ReadinessWindow time.Duration

	// CredentialsWarning is how long before the credentials of a member's client expire
	// (federation.CredentialsExpiryGetter: a ServiceAccount token's exp claim, a client
	// certificate's NotAfter) the monitor sets the Cluster's CredentialsExpiring condition
	// True and records a Warning, so they are renewed before the member refuses them.
	// Default: [DefaultCredentialsWarning] (7 days).
	CredentialsWarning time.Duration

	// CacheSyncTimeout bounds how long Run waits for the first list of the Clusters before
	// it returns an error. It runs on Clock. Default: [DefaultCacheSyncTimeout] (2 minutes).
	CacheSyncTimeout time.Duration

	// Disruption says when the fleet counts as disrupted (placement.FleetDisruption): every
	// cluster lost, or a large share of it lost within a short window, the control plane's
	// own outage. Meanwhile no taint turns NoExecute. The clusters that came back within
	// the window count with the lost ones, so a disruption ends only once enough clusters
	// have been back for the window. Give the scheduler the same (package controlplane does).
	// Window should not exceed EvictionDelay: a cluster lost early in the window could be
	// tainted NoExecute before the rest are lost. Default: the zero
	// placement.DisruptionOptions (55% of the fleet and at least 3 clusters within 5 minutes,
	// or every cluster).
	Disruption placement.DisruptionOptions
}

// complete validates o and fills in the defaults.
func (o *MonitorOptions) complete() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Period", o.Period}, {"Timeout", o.Timeout}, {"HeartbeatInterval", o.HeartbeatInterval}, {"EvictionDelay", o.EvictionDelay}, {"ReadinessWindow", o.ReadinessWindow}, {"CredentialsWarning", o.CredentialsWarning}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s must not be negative, got %s", ErrInvalidOptions, d.name, d.v))
		}
	}
	if o.Workers < 0 || o.FailureThreshold < 0 || o.SuccessThreshold < 0 {
		errs = append(errs, fmt.Errorf("%w: Workers, FailureThreshold and SuccessThreshold must not be negative", ErrInvalidOptions))
	}
	if err := loop.ValidateShard(ErrInvalidOptions, o.Shard); err != nil {
		errs = append(errs, err)
	}
	if err := o.Disruption.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w: Disruption: %w", ErrInvalidOptions, err))
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
		o.Workers = DefaultMonitorWorkers
	}
	if o.Period == 0 {
		o.Period = DefaultProbePeriod
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultProbeTimeout
	}
	if o.FailureThreshold == 0 {
		o.FailureThreshold = DefaultFailureThreshold
	}
	if o.SuccessThreshold == 0 {
		o.SuccessThreshold = DefaultSuccessThreshold
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.EvictionDelay == 0 {
		o.EvictionDelay = DefaultEvictionDelay
	}
	if o.ReadinessWindow == 0 {
		o.ReadinessWindow = DefaultReadinessWindowDelays * o.EvictionDelay
	}
	if w := cmp.Or(o.Disruption.Window, placement.DefaultDisruptionWindow); o.HeartbeatInterval >= w {
		return fmt.Errorf("%w: HeartbeatInterval (%s) must be shorter than Disruption.Window (%s): a Ready cluster not heard from within the window does not count in the fleet's disruption (placement.FleetDisruption)",
			ErrInvalidOptions, o.HeartbeatInterval, w)
	}
	if o.ReadinessWindow < o.EvictionDelay {
		return fmt.Errorf("%w: ReadinessWindow (%s) must not be shorter than EvictionDelay (%s): the not-ready time within it could never reach the delay",
			ErrInvalidOptions, o.ReadinessWindow, o.EvictionDelay)
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if o.CredentialsWarning == 0 {
		o.CredentialsWarning = DefaultCredentialsWarning
	}
	return nil
}

// ClusterMonitor keeps every Cluster's status true: it probes each member's API server,
// turns Ready False only after FailureThreshold failures in a row (and True after
// SuccessThreshold successes, more for a cluster that flaps), records the version, region, zones, capacity and available
// resources, and sets the not-ready and unreachable taints that placement honours.
//
// Reconcile probes one cluster once; Run watches the Clusters and probes each every Period.
// The consecutive-probe counters and the readiness history (the not-ready time toward
// EvictionDelay, the flaps) live in memory, on this monitor's clock: after a restart the
// Cluster's conditions and taints are the state, and one more probe moves them on. A ClusterMonitor is safe for concurrent
// use.
type ClusterMonitor struct {
	host     federation.ClusterClient
	clusters federation.ClusterSet
	opts     MonitorOptions
	metrics  *monitorMetrics

	// clusterList decodes the Clusters the fleet's disruption is judged on, once per
	// resourceVersion.
	clusterList loop.Clusters

	mu    sync.Mutex
	state map[string]*probeState
}

// NewClusterMonitor returns a ClusterMonitor reading and writing Cluster objects through host
// and probing members through clusters. It starts nothing: call [ClusterMonitor.Reconcile]
// or [ClusterMonitor.Run]. It returns an error when host or clusters is nil, an option is
// invalid (wrapping [ErrInvalidOptions]), or the metrics cannot be registered.
func NewClusterMonitor(host federation.ClusterClient, clusters federation.ClusterSet, opts MonitorOptions) (*ClusterMonitor, error) {
	if host == nil {
		return nil, errors.New("status: NewClusterMonitor: host client is nil")
	}
	if clusters == nil {
		return nil, errors.New("status: NewClusterMonitor: cluster set is nil")
	}
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("status: NewClusterMonitor: %w", err)
	}
	m, err := newMonitorMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("status: NewClusterMonitor: %w", err)
	}
	return &ClusterMonitor{host: host, clusters: clusters, opts: opts, metrics: m, state: map[string]*probeState{}}, nil
}
