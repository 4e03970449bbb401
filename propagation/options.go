package propagation

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// ErrInvalidOptions is wrapped by [New]'s error when an option or a type is invalid.
var ErrInvalidOptions = errors.New("propagation: invalid options")

// Defaults of [Options].
const (
	// DefaultWorkers is how many keys Run handles in parallel: one, as a pass mostly reads
	// from caches and a native object changes seldom (the control plane runs one loop per
	// type, so idle workers add up).
	DefaultWorkers = 1
	// DefaultCacheSyncTimeout bounds Run's wait for its first lists.
	DefaultCacheSyncTimeout = loop.DefaultCacheSyncTimeout
)

// Options configure a [Propagator]. The zero value is the documented default for every field.
type Options struct {
	// Clock drives Run's requeues and backoff. Default: the real clock.
	Clock clock.WithTicker
	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger
	// Registerer receives fedkit_reconciles_total and fedkit_reconcile_duration_seconds with
	// loop="propagation" and type the federated kinds joined by "+", and Run's work queue
	// metrics, named "propagation/<kinds>" (METRICS.md). nil: no metrics.
	Registerer prometheus.Registerer
	// Cache is the host informer cache Run shares with other loops (package hostcache).
	// nil: Run keeps a cache of its own.
	Cache *hostcache.Cache
	// Events records events on native objects (the policy chosen or dropped, a
	// Federated<Kind> written by hand) and on invalid policies. nil: none.
	Events federation.EventRecorder
	// Namespace restricts Run to native objects of one namespace. Default: all.
	Namespace string
	// ControlPlaneNamespace is the control plane's own namespace on the host (its Leases,
	// the clusters' credentials): no policy selects objects in it, as none selects in
	// kube-system, kube-public or kube-node-lease ([federation.ReservedNamespace]). Default:
	// federation.DefaultNamespace ("fedkit-system").
	ControlPlaneNamespace string
	// Gate is where every delete of the loop goes (a generated Federated<Kind> or
	// ReplicaSchedulingPreference): package gate checks it carries
	// federation.GeneratedByLabel: propagation, outside the reserved namespaces. A refusal
	// is a Warning (gate's reason RefusedByGate) on the native object, and the object is
	// looked at again after gate.RecheckAfter. Default: gate.New with ControlPlaneNamespace.
	Gate *gate.Gate
	// Shard restricts Run to the keys this shard owns ([federation.Shard.Owns]).
	Shard federation.Shard
	// Workers is how many keys Run handles in parallel. Default: [DefaultWorkers].
	Workers int
	// CacheSyncTimeout bounds Run's wait for its first lists. Default:
	// [DefaultCacheSyncTimeout].
	CacheSyncTimeout time.Duration
}

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
	if o.ControlPlaneNamespace == "" {
		o.ControlPlaneNamespace = federation.DefaultNamespace
	}
	if o.Gate == nil {
		o.Gate = gate.New(gate.Options{ControlPlaneNamespace: o.ControlPlaneNamespace})
	}
}

// Propagator is the loop that writes the Federated<Kind> of every native host object a
// policy selects, and the fleet's replica counts back into the native object's status.
// Reconcile is one pass over one namespace/name, for every type; Run watches the host and
// calls it. A Propagator is safe for concurrent use.
type Propagator struct {
	base
}

// base is what the Propagator and the PolicyMonitor both hold.
type base struct {
	host    federation.ClusterClient
	types   []federation.TypeConfig
	opts    Options
	metrics *fedmetrics.Reconciles
	notifier
	// decoded keeps the decoded policies.
	decoded decodeCache
}

// New returns a Propagator for the native kinds of types (namespaced ones: a type whose
// target is cluster-scoped is an error), reading and writing through host. It starts
// nothing.
func New(host federation.ClusterClient, types []federation.TypeConfig, opts Options) (*Propagator, error) {
	p := &Propagator{}
	if err := p.init(host, types, opts, kinds(types)); err != nil {
		return nil, fmt.Errorf("propagation: New: %w", err)
	}
	return p, nil
}

// init checks the arguments, completes opts and registers the metrics of typ.
func (b *base) init(host federation.ClusterClient, types []federation.TypeConfig, opts Options, typ string) error {
	if err := check(host, types, opts); err != nil {
		return err
	}
	opts.complete()
	m, err := fedmetrics.NewReconciles(opts.Registerer, fedmetrics.LoopPropagation, typ)
	if err != nil {
		return err
	}
	b.host, b.types, b.opts, b.metrics = host, append([]federation.TypeConfig(nil), types...), opts, m
	b.notifier.events = opts.Events
	return nil
}

// check checks a host, namespaced types without duplicates, a valid shard.
func check(host federation.ClusterClient, types []federation.TypeConfig, opts Options) error {
	if host == nil {
		return errors.New("host client is nil")
	}
	seen := map[string]bool{}
	for _, t := range types {
		if err := t.Validate(); err != nil {
			return err
		}
		if !t.Namespaced {
			return fmt.Errorf("%w: %s is cluster-scoped; only namespaced kinds are propagated", ErrInvalidOptions, t.Target.Kind)
		}
		if seen[t.Target.String()] {
			return fmt.Errorf("%w: %s twice", ErrInvalidOptions, t.Target.Kind)
		}
		seen[t.Target.String()] = true
	}
	return loop.ValidateShard(ErrInvalidOptions, opts.Shard)
}

// kinds names the federated kinds of types, joined by "+": the metrics' type label and the
// work queue's name.
func kinds(types []federation.TypeConfig) string {
	var out []string
	for _, t := range types {
		out = append(out, t.Federated.Kind)
	}
	return strings.Join(out, "+")
}

// DefaultTypes returns the types of ts a control plane propagates by default: those with
// namespaced targets, but not Secrets. A Secret policy could copy credentials to every
// member, and no role of config/rbac lets the control plane list or watch a Secret outside
// its own namespace. An embedder who wants Secrets passes SecretType to New and grants the
// access.
func DefaultTypes(ts []federation.TypeConfig) []federation.TypeConfig {
	var out []federation.TypeConfig
	for _, t := range ts {
		if t.Namespaced && t.Target.GroupKind() != federation.SecretType.Target.GroupKind() {
			out = append(out, t)
		}
	}
	return out
}
