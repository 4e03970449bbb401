package dnsrecord

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/loop"
)

// DefaultDomainNamespace is where the controller looks for Domains by default: the namespace
// federation/kube keeps cluster credentials in, which only administrators write to.
const DefaultDomainNamespace = "fedkit-system"

// DefaultResyncPeriod is how often a record is recomputed when nothing it watches changed:
// the specification's status poll. Member Services, Ingresses and EndpointSlices change
// without an event on the host, so this bounds how stale a record can get.
const DefaultResyncPeriod = 30 * time.Second

// DefaultReadTimeout bounds one member read, as the Collector's.
const DefaultReadTimeout = 10 * time.Second

// DefaultWorkers is how many records Run reconciles in parallel.
const DefaultWorkers = 2

// DefaultCacheSyncTimeout bounds Run's wait for its first lists.
const DefaultCacheSyncTimeout = loop.DefaultCacheSyncTimeout

// Options configure a [Controller]. The zero value is the documented default for every field.
type Options struct {
	// Clock stamps condition transitions and drives Run's requeues and backoff. Default: the
	// real clock.
	Clock clock.WithTicker

	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger

	// Registerer receives the controller's metrics: fedkit_reconciles_total and
	// fedkit_reconcile_duration_seconds with loop="dns" and the record kind as type,
	// fedkit_member_requests_total (its live member reads), fedkit_dns_endpoint_writes_total,
	// and Run's work queue (workqueue_*, controller_runtime_*); see METRICS.md. nil: no metrics.
	Registerer prometheus.Registerer

	// Cache is the host informer cache Run adds its handlers to, shared with the other loops
	// given it (see package hostcache); its owner runs it. nil: Run keeps a cache of its own.
	Cache *hostcache.Cache

	// Events records events on the records: EndpointsWritten when a DNSEndpoint is created,
	// changed or deleted; a Warning with the Ready condition's reason when it turns False or
	// changes reason while False (DomainNotFound, ResolveFailed, DNSEndpointConflict, ...);
	// DNSEndpointWriteFailed when the API refuses a write, once until a write succeeds.
	// Never on a pass that changed nothing. nil: none.
	Events federation.EventRecorder

	// Resolver turns load-balancer hostnames into addresses. Default: a *net.Resolver with
	// the system's configuration.
	Resolver Resolver

	// Identity is the value of federation.ManagedByLabel on the member Services and Ingresses
	// this federation manages, as the Syncer's and the Collector's Options.Identity: a member
	// object of the record's name that carries another value (or none) belongs to someone
	// else and is not published. Default: federation.ManagedByValue.
	Identity string

	// DomainNamespace holds the Domain objects that records name in spec.domainRef.
	// Default: [DefaultDomainNamespace].
	DomainNamespace string

	// ResyncPeriod is the Result.RequeueAfter of every pass over an existing record.
	// Default: [DefaultResyncPeriod].
	ResyncPeriod time.Duration

	// ReadTimeout bounds each member read of a pass, on Clock: the Service or Ingress (with
	// the wait for a member cache to sync) and the EndpointSlices. A member that does not
	// answer in time keeps its last load balancer, and the pass goes on with the other
	// clusters and is retried. Default: [DefaultReadTimeout].
	ReadTimeout time.Duration

	// Namespace restricts Run to records in one namespace. Default: all.
	Namespace string

	// Shard restricts Run to the records this shard owns by namespace and name
	// ([federation.Shard.Owns]) when several processes split the work (package controlplane can
	// claim shards at run time through Leases): Run drops every other key before it is queued,
	// whether it comes from an event, a Cluster change, a member change or a requeue. Reconcile
	// itself is not filtered: an embedder that calls it directly decides which keys it passes, and
	// can use Shard.Owns for that. Default: the zero Shard, which owns every key.
	Shard federation.Shard

	// Workers is how many records Run reconciles in parallel. Default: [DefaultWorkers] (2).
	Workers int

	// CacheSyncTimeout bounds how long Run waits for the first list of every resource it
	// watches before it returns an error naming the one that could not be listed (a CRD
	// missing on the host, say). It runs on Clock. Default: [DefaultCacheSyncTimeout] (2 minutes).
	CacheSyncTimeout time.Duration
	// Gate is where the controller's deletes of DNSEndpoints go (package gate: the
	// endpoint must be owned by its record, outside the reserved namespaces). Default:
	// gate.New(gate.Options{}); the control plane passes one Gate to every loop.
	Gate *gate.Gate
}

// complete fills in defaults.
func (o *Options) complete() {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Resolver == nil {
		o.Resolver = &net.Resolver{}
	}
	if o.Identity == "" {
		o.Identity = federation.ManagedByValue
	}
	if o.Gate == nil {
		o.Gate = gate.New(gate.Options{})
	}
	if o.DomainNamespace == "" {
		o.DomainNamespace = DefaultDomainNamespace
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
}

// Controller is the DNS loop. For each ServiceDNSRecord it reads the member Services of the
// Ready clusters (and their EndpointSlices), writes status.domain and status.dns, computes
// the records with [ServiceEndpoints] and writes them to the DNSEndpoint service-<name>; for
// each IngressDNSRecord it does the same with the member Ingresses, [IngressEndpoints] and
// ingress-<name>. external-dns, run with --source=crd, takes the DNSEndpoints from there.
//
// [Controller.Reconcile] is one pass over the records of one namespace and name (a
// ServiceDNSRecord and an IngressDNSRecord may share it); [Controller.Run] watches the host
// and calls it. A Controller is safe for concurrent use.
type Controller struct {
	host     federation.ClusterClient
	clusters federation.ClusterSet
	opts     Options
	metrics  *metrics

	// failures remembers, per record, the last DNSEndpoint write failure recorded as an
	// event, so a failing write is reported once, not on every retry.
	mu       sync.Mutex
	failures map[string]string
	index    *claimIndex // Run's, while it runs: which records claim which names
}

// New returns a Controller that reads records, Domains, federated Services and Ingresses and
// Clusters through host, member objects through clusters, and writes record status and
// DNSEndpoints through host. It starts nothing: call [Controller.Reconcile] or
// [Controller.Run]. It returns an error when host or clusters is nil, an option is invalid
// (wrapping [ErrInvalidOptions]), or the metrics cannot be registered.
func New(host federation.ClusterClient, clusters federation.ClusterSet, opts Options) (*Controller, error) {
	if host == nil {
		return nil, errors.New("dnsrecord: New: host client is nil")
	}
	if clusters == nil {
		return nil, errors.New("dnsrecord: New: cluster set is nil")
	}
	if err := loop.ValidateShard(ErrInvalidOptions, opts.Shard); err != nil {
		return nil, fmt.Errorf("dnsrecord: New: %w", err)
	}
	opts.complete()
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("dnsrecord: New: %w", err)
	}
	return &Controller{host: host, clusters: clusters, opts: opts, metrics: m}, nil
}
