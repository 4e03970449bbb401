package sync

import (
	"errors"
	"fmt"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/loop"
	"github.com/fedkit/fedkit/override"
	"github.com/fedkit/fedkit/sync/plan"
)

// ConflictPolicy says what sync does when a member already has an object of the same name that
// no federation manages.
type ConflictPolicy string

const (
	// ConflictAbort leaves the member object alone and reports ReasonAlreadyExists for that
	// cluster (the default, as in KubeFed).
	ConflictAbort ConflictPolicy = "Abort"
	// ConflictAdopt takes the object over: it is updated to the render and labelled as managed.
	ConflictAdopt ConflictPolicy = "Adopt"
)

// ClusterRemovalPolicy says what sync does with its member objects in a cluster whose Cluster
// object is deleted (the cluster leaves the federation).
type ClusterRemovalPolicy string

const (
	// RemovalOrphan leaves the objects running in the cluster, without the federation's
	// labels and annotations (the default: removing a cluster from the federation never
	// stops its workloads).
	RemovalOrphan ClusterRemovalPolicy = "Orphan"
	// RemovalDelete deletes them.
	RemovalDelete ClusterRemovalPolicy = "Delete"
)

// EventRecorder records Kubernetes events about federated objects. It is
// [federation.EventRecorder], which every loop's Options takes; the name is kept so that code
// written against it still compiles.
type EventRecorder = federation.EventRecorder

// ErrInvalidOptions is wrapped by [New]'s error when an option is invalid (an unknown policy,
// an Options.Shard out of range); the message names the field.
var ErrInvalidOptions = errors.New("sync: invalid options")

// Options configure a [Syncer]. The zero value is the documented default for every field.
type Options struct {
	// Clock stamps conditions and drives Run's requeues, backoff, rate limits and the
	// deletion timeout. Default: the real clock.
	Clock clock.WithTicker

	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger

	// Registerer receives the syncer's metrics: fedkit_reconciles_total and
	// fedkit_reconcile_duration_seconds with loop="sync", fedkit_member_requests_total (its
	// writes to members and live reads), fedkit_propagation_lag_seconds, and Run's work
	// queues (workqueue_*, controller_runtime_*); see METRICS.md. nil: no metrics.
	Registerer prometheus.Registerer

	// Cache is the host informer cache Run adds its handlers to, shared with the other loops
	// given it (see package hostcache); its owner runs it. nil: Run keeps a cache of its own.
	Cache *hostcache.Cache

	// Events records events on federated objects (created, updated, deleted in a cluster,
	// failures, adoption refused). nil: none.
	Events EventRecorder

	// StatusWriter, when set, takes the loop's status writes and merges them with the other
	// loops' writes to the same object (package controlplane sets one for the loops it runs);
	// the loop reads objects with the changes still pending. nil: the loop writes its status
	// itself, at once.
	StatusWriter federation.StatusWriter

	// Identity is the value of federation.ManagedByLabel on the member objects this Syncer
	// manages. Two federations over one fleet with different identities never touch each
	// other's objects, and each holds the Clusters with its own ClusterFinalizer.
	// Default: federation.ManagedByValue ("fedkit").
	Identity string

	// Conflict is the policy for member objects that exist and that no federation manages.
	// federation.AdoptAnnotation: "true" on a federated object adopts whatever the policy.
	// Default: ConflictAbort.
	Conflict ConflictPolicy

	// ClusterRemoval is what happens to the member objects in a cluster whose Cluster object
	// is deleted. Sync holds the Cluster with a finalizer (ClusterFinalizer) while it has
	// objects there, cleans up, then releases it; a cluster that cannot be reached holds it at
	// most DeletionTimeout. Default: RemovalOrphan.
	ClusterRemoval ClusterRemovalPolicy

	// Namespace restricts Run to federated objects in one namespace. Default: all.
	Namespace string

	// Shard restricts Run to the federated objects this shard owns ([federation.Shard.Owns]), and
	// to the Clusters it owns by name among those leaving the federation (their release), when
	// several processes split the work (package controlplane can claim shards at run time through
	// Leases): Run drops every other key before it is queued, whether it comes from an event, a
	// Cluster change, a member change or a requeue. Reconcile itself is not filtered: an embedder
	// that calls it directly decides which keys it passes, and can use Shard.Owns for that.
	// Default: the zero Shard, which owns every key.
	Shard federation.Shard

	// Workers is how many federated objects Run syncs in parallel. Default: [DefaultWorkers] (16). A pass
	// spends most of its time waiting on member and host API calls, so workers are cheap;
	// on real API servers 16 workers propagated about twice as many objects a second as 4
	// (SCALE.md).
	Workers int

	// ClusterConcurrency bounds how many clusters one Reconcile writes to at once.
	// Default: [DefaultClusterConcurrency] (16).
	ClusterConcurrency int

	// ClusterQPS and ClusterBurst rate-limit the writes of this Syncer to each member
	// cluster when ClusterQPS is positive: a token bucket per cluster, on Clock, of
	// ClusterBurst tokens (default [DefaultClusterBurst], 100). Zero or negative: no
	// client-side limit, the default, as for the host client (federation/kube) and in
	// controller-runtime since v0.21, on SIG API Machinery's advice: each member's API
	// Priority and Fairness protects it, and Workers bounds the writes in flight to one member
	// (one per pass). A fixed rate was the ceiling of bulk propagation: at 50 writes a second
	// a member took 18 s for 1,000 new objects whatever the machine could do. The member
	// clients may still limit.
	ClusterQPS   float64
	ClusterBurst int

	// ConflictRetries is how many times one cluster's write is retried at once after a
	// Conflict (re-read, re-render, write again) before the object is requeued with backoff.
	// Default: [DefaultConflictRetries] (3).
	ConflictRetries int

	// DeletionPropagation is the propagationPolicy of sync's deletes of member objects:
	// metav1.DeletePropagationBackground (the default: the member's garbage collector deletes
	// the dependents, so a deleted Job never orphans its Pods, whatever the kind's own
	// default) or metav1.DeletePropagationForeground (the member object goes only after its
	// dependents, and holds the federated object's finalizer until then). Orphaning is
	// federation.OrphanAnnotation's, and keeps the member object itself.
	DeletionPropagation metav1.DeletionPropagation

	// DeletionTimeout is how long a federated object being deleted waits for its member
	// objects to be gone (clusters that are not ready or unreachable, objects their own
	// finalizers hold) before its finalizer is removed anyway; what was left behind is
	// reported in an event and the log. It counts from sync's first pass over the deletion,
	// recorded on the object (federation.DeletionStartedAnnotation), not from its
	// deletionTimestamp: a control plane that was down longer still gives the clusters the
	// whole time. Default: [DefaultDeletionTimeout] (10m).
	DeletionTimeout time.Duration

	// ResyncPeriod is how often Run checks every object against its members even when
	// nothing changed (drift is normally seen at once through member caches). Default: [DefaultResyncPeriod] (10m).
	ResyncPeriod time.Duration

	// CacheSyncTimeout bounds how long Run waits for its caches to fill before it gives up
	// with an error naming the resource. Default: [DefaultCacheSyncTimeout] (2m).
	CacheSyncTimeout time.Duration

	// HistoryNamespace is where the revision history of cluster-scoped federated objects is
	// kept (ControllerRevisions are namespaced). Default: [DefaultHistoryNamespace] ("default").
	HistoryNamespace string

	// KeepCreatedNamespaces keeps the member namespaces sync creates for its objects
	// (CreatedNamespaceAnnotation) when their last object goes. Default: false, a namespace sync
	// created is deleted once nothing lives in it but what the federation is removing, as
	// checked over every namespaced, listable resource the member serves (see the package
	// documentation on namespaces).
	KeepCreatedNamespaces bool

	// Renderer renders member objects (a custom retention table). nil: the default.
	Renderer *override.Renderer

	// WaitForScheduler makes sync wait for the scheduler: a federated object whose Scheduled
	// condition has not observed its current generation, or has but came with no
	// status.schedule (the scheduler refused the object or its preference), is not
	// propagated. Nothing is written to the members, none is deleted, and the Propagated
	// condition says why (ReasonWaitingForSchedule, ReasonNotScheduled). Set it when a
	// scheduler.Scheduler runs for the type, as package controlplane does: without it, a new
	// object reaches the members with the template's replica count, by spec.placement, in
	// the moment before the scheduler's first write (a FederatedDeployment of 6 replicas
	// divided 3/3/3 briefly runs 6/6/6), and everywhere for as long as its
	// ReplicaSchedulingPreference is invalid. Deletion never waits. Default: false, for
	// embedders who run sync without a scheduler (the template's count by spec.placement);
	// even then sync waits for a scheduler that has scheduled an older generation.
	WaitForScheduler bool

	// Gate is where every destructive write of the Syncer goes (member deletes, orphanings,
	// adoptions, a namespace it created and deletes again, a Secret's placement, the
	// ControllerRevisions of its history): package gate checks each against its invariants
	// with the evidence plan.Decide decided it on, and refuses what breaks one
	// (plan.ReasonRefused). Default: gate.New(gate.Options{}); the control plane passes
	// one Gate to every loop.
	Gate *gate.Gate
}

// Defaults of Options.
const (
	DefaultWorkers            = 16
	DefaultClusterConcurrency = 16
	DefaultClusterBurst       = 100
	DefaultConflictRetries    = 3
	DefaultDeletionTimeout    = 10 * time.Minute
	DefaultResyncPeriod       = 10 * time.Minute
	DefaultCacheSyncTimeout   = loop.DefaultCacheSyncTimeout
	DefaultHistoryNamespace   = "default"
)

// completeIdentity defaults the federation's identity and the gate its writes go through.
func (o *Options) completeIdentity() {
	if o.Identity == "" {
		o.Identity = federation.ManagedByValue
	}
	if o.Gate == nil {
		o.Gate = gate.New(gate.Options{})
	}
}

func (o *Options) complete() error {
	if err := loop.ValidateShard(ErrInvalidOptions, o.Shard); err != nil {
		return err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	o.completeIdentity()
	switch o.Conflict {
	case "":
		o.Conflict = ConflictAbort
	case ConflictAbort, ConflictAdopt:
	default:
		return fmt.Errorf("%w: Options.Conflict: unknown conflict policy %q (want %s or %s)", ErrInvalidOptions, o.Conflict, ConflictAbort, ConflictAdopt)
	}
	switch o.DeletionPropagation {
	case "":
		o.DeletionPropagation = metav1.DeletePropagationBackground
	case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
	default:
		return fmt.Errorf("%w: Options.DeletionPropagation: unknown deletion propagation %q (want %s or %s; orphaning is federation.OrphanAnnotation's)",
			ErrInvalidOptions, o.DeletionPropagation, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground)
	}
	switch o.ClusterRemoval {
	case "":
		o.ClusterRemoval = RemovalOrphan
	case RemovalOrphan, RemovalDelete:
	default:
		return fmt.Errorf("%w: Options.ClusterRemoval: unknown cluster removal policy %q (want %s or %s)", ErrInvalidOptions, o.ClusterRemoval, RemovalOrphan, RemovalDelete)
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.ClusterConcurrency <= 0 {
		o.ClusterConcurrency = DefaultClusterConcurrency
	}
	if o.ClusterBurst <= 0 {
		o.ClusterBurst = DefaultClusterBurst
	}
	if o.ConflictRetries <= 0 {
		o.ConflictRetries = DefaultConflictRetries
	}
	if o.DeletionTimeout <= 0 {
		o.DeletionTimeout = DefaultDeletionTimeout
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if o.HistoryNamespace == "" {
		o.HistoryNamespace = DefaultHistoryNamespace
	}
	if o.Renderer == nil {
		o.Renderer = &override.Renderer{}
	}
	return nil
}

// Syncer is the push loop for one federated type: it renders each federated object for the
// clusters it is placed in and makes the member objects match, deletes them where it is no
// longer placed, records revisions, and writes its part of the status.
//
// Reconcile is one pass over one object; Run watches the host and the members and calls it.
// A Syncer is safe for concurrent use, but two passes over the same key must not run at once
// (Run guarantees it; an embedder's queue must too, as controller-runtime's does).
type Syncer struct {
	host     federation.ClusterClient
	clusters federation.ClusterSet
	typ      federation.TypeConfig
	opts     Options
	metrics  *metrics
	limits   *limiters
	// fields is the member type's schema, for the drift comparison (plan.Input.Schema).
	fields *plan.Schema

	// mu guards what the Syncer remembers: objects, the index nsWaiting, historyEpoch,
	// enqueue, held and leaving. It is read-locked by the lookups of every member read and
	// write.
	mu gosync.RWMutex
	// objects is what the Syncer remembers of each federated object (see record).
	objects map[federation.Key]*record
	// nsWaiting indexes the objects' namespace waits (record.nsWaits) by member namespace.
	nsWaiting map[memberNamespace]map[federation.Key]bool
	// historyEpoch counts the ControllerRevision deletions Run saw (see historyChecked).
	historyEpoch uint64
	// enqueue asks Run's loop for another pass over a key (nil outside Run): a member change
	// seen while sync's own write to it was under way, and not that write, must not be lost.
	enqueue func(...federation.Key)

	// held remembers the clusters found to carry this Syncer's ClusterFinalizer, by name, with
	// the uid of the Cluster that carried it; leaving, those being deleted that wait for sync's
	// cleanup.
	held    map[string]types.UID
	leaving map[string]bool
	// holding makes the passes that need one Cluster held at once share one read and patch.
	holding singleflight.Group
	// nsInUse holds the member namespaces Run keeps for the federation's objects
	// (ReasonNamespaceInUse), to pass over their FederatedNamespace again as those leave.
	nsInUse namespacesInUse

	// clusterDecoder decodes each Cluster once per resourceVersion.
	clusterDecoder loop.Clusters
	clusterMu      gosync.Mutex
	// clusterList is the last decoded list, valid while the cache's resourceVersion is
	// clustersRV (only with Run's reader).
	clusterList []federation.Cluster
	clustersRV  string
}

// New returns a Syncer for the federated type of typ, reading and writing the host through
// host and the members through clusters. It starts nothing: call [Syncer.Reconcile] or
// [Syncer.Run]. It fails when a dependency is nil, typ is incomplete, an option is invalid
// (wrapping [ErrInvalidOptions], naming the field) or the metrics cannot be registered.
func New(host federation.ClusterClient, clusters federation.ClusterSet, typ federation.TypeConfig, opts Options) (*Syncer, error) {
	switch {
	case host == nil:
		return nil, errors.New("sync: New: host client is nil")
	case clusters == nil:
		return nil, errors.New("sync: New: cluster set is nil")
	}
	if err := typ.Validate(); err != nil {
		return nil, fmt.Errorf("sync: New: %w", err)
	}
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("sync: New: %w", err)
	}
	m, err := newMetrics(opts.Registerer, typ.Federated.Kind)
	if err != nil {
		return nil, fmt.Errorf("sync: New: %w", err)
	}
	return &Syncer{
		host: host, clusters: clusters, typ: typ, opts: opts, metrics: m, fields: plan.SchemaFor(typ.Target),
		limits:    newLimiters(opts.Clock, opts.ClusterQPS, opts.ClusterBurst),
		objects:   map[federation.Key]*record{},
		nsWaiting: map[memberNamespace]map[federation.Key]bool{},
		held:      map[string]types.UID{},
		leaving:   map[string]bool{},
	}, nil
}
