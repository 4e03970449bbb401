package autoscale

import (
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/loop"
)

// Defaults of [Options].
const (
	// DefaultResyncPeriod is how often an autoscaled preference is looked at again: the
	// kube-controller-manager's --horizontal-pod-autoscaler-sync-period.
	DefaultResyncPeriod = recommend.DefaultSyncPeriod
	// DefaultReadTimeout bounds the reads of one member in a pass.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWorkers is how many preferences Run handles in parallel.
	DefaultWorkers = 2
)

// ErrInvalidOptions is returned by [New] for options it cannot run with.
var ErrInvalidOptions = errors.New("autoscale: invalid options")

// Options configure an [Autoscaler]. The zero value is the documented default of every field.
type Options struct {
	// Clock stamps samples, conditions and the memory of recommendations, and drives Run's
	// requeues. Default: the real clock.
	Clock clock.WithTicker

	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger

	// Registerer receives fedkit_reconciles_total and fedkit_reconcile_duration_seconds with
	// loop="autoscale" and type ReplicaSchedulingPreference, and Run's work queue metrics
	// (see METRICS.md). nil: no metrics.
	Registerer prometheus.Registerer

	// Events records events on the preferences: SuccessfulRescale with the explanation when
	// the total changes; a Warning (FailedGetMetrics, NoQuorum, InvalidPreference, ...) when
	// the total cannot be computed, once per reason. nil: none.
	Events federation.EventRecorder

	// Cache is the host informer cache Run adds its handlers to, shared with the other loops
	// given it (package hostcache); its owner runs it. nil: Run keeps a cache of its own.
	Cache *hostcache.Cache

	// Source gathers the members' samples. Default: [ByMode] with [Members] over the
	// Autoscaler's ClusterSet for push members (read through their ClusterClients) and
	// [Reports] over the host for pull members (their agents' reports).
	Source MetricsSource

	// Types are the federated types a preference's spec.targetKind may name. Default: the
	// built-in types whose replicas are divided (federation.BuiltinTypes, Divisible).
	Types []federation.TypeConfig

	// Identity is the value of federation.ManagedByLabel on the HorizontalPodAutoscalers
	// Distributed mode writes in the members. Default: federation.ManagedByValue.
	Identity string
	// Gate is where Distributed mode's deletes of member HorizontalPodAutoscalers go
	// (package gate). Default: gate.New(gate.Options{}); the control plane passes one Gate
	// to every loop.
	Gate *gate.Gate

	// ResyncPeriod is how often an autoscaled preference is looked at again.
	// Default: [DefaultResyncPeriod].
	ResyncPeriod time.Duration

	// StaleAfter is how old a member's last successful read may be and still count (status's
	// freshness rule). Default: three ResyncPeriods.
	StaleAfter time.Duration

	// ReadTimeout bounds the reads of one member in a pass, on Clock. Default:
	// [DefaultReadTimeout].
	ReadTimeout time.Duration

	// CPUInitializationPeriod and InitialReadinessDelay are the kube-controller-manager's
	// flags of the same names. Default: [DefaultCPUInitializationPeriod],
	// [DefaultInitialReadinessDelay].
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration

	// Namespace restricts Run to the preferences of one namespace. Default: all.
	Namespace string

	// Shard restricts Run to the preferences this shard owns ([federation.Shard.Owns]).
	// Reconcile itself is not filtered. Default: the zero Shard, which owns every key.
	Shard federation.Shard

	// Workers is how many preferences Run handles in parallel. Default: [DefaultWorkers].
	Workers int

	// CacheSyncTimeout bounds Run's wait for its first lists (a CRD missing on the host).
	// Default: loop.DefaultCacheSyncTimeout (2 minutes).
	CacheSyncTimeout time.Duration
}

// StaleAfter is Options.StaleAfter's default for a ResyncPeriod ([recommend.StaleAfter]).
func StaleAfter(resync time.Duration) time.Duration { return recommend.StaleAfter(resync) }

// complete fills in the defaults.
func (o *Options) complete(host federation.ClusterClient, clusters federation.ClusterSet) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Identity == "" {
		o.Identity = federation.ManagedByValue
	}
	if o.Gate == nil {
		o.Gate = gate.New(gate.Options{})
	}
	if o.Source == nil {
		o.Source = ByMode{Push: Members{Clusters: clusters, Identity: o.Identity, Gate: o.Gate}, Pull: Reports{Host: host}}
	}
	if o.Types == nil {
		for _, t := range federation.BuiltinTypes() {
			if t.Divisible() {
				o.Types = append(o.Types, t)
			}
		}
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = StaleAfter(o.ResyncPeriod)
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = loop.DefaultCacheSyncTimeout
	}
}

// typeFor returns the type whose federated kind is kind.
func (o *Options) typeFor(kind string) (federation.TypeConfig, bool) {
	for _, t := range o.Types {
		if t.Federated.Kind == kind {
			return t, true
		}
	}
	return federation.TypeConfig{}, false
}
