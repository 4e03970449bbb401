package dependencies

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// ErrInvalidOptions is wrapped by New's error for an option it cannot use.
var ErrInvalidOptions = errors.New("dependencies: invalid options")

// Defaults of [Options].
const (
	// DefaultWorkers is how many namespaces Run passes over in parallel.
	DefaultWorkers = 2
	// DefaultCacheSyncTimeout bounds Run's wait for its first lists.
	DefaultCacheSyncTimeout = loop.DefaultCacheSyncTimeout
)

// Options configure [Dependencies]. The zero value is the documented default for every field.
type Options struct {
	// Clock stamps condition transitions and drives Run's requeues. Default: the real clock.
	Clock clock.WithTicker
	// Logger is used when the context carries no logger. Default: logr.Discard().
	Logger logr.Logger
	// Registerer receives fedkit_reconciles_total and fedkit_reconcile_duration_seconds with
	// loop="dependencies", and Run's work queue metrics (METRICS.md). nil: no metrics.
	Registerer prometheus.Registerer
	// Cache is the host informer cache Run shares with other loops; its owner runs it. nil:
	// Run keeps its own.
	Cache *hostcache.Cache
	// Events records a Warning DependencyMissing on a workload whose dependency is missing,
	// and a Normal DependenciesResolved when it appears. nil: none.
	Events federation.EventRecorder
	// StatusWriter takes the workloads' condition writes, merged with other loops' (package
	// controlplane sets it). nil: the loop writes status itself.
	StatusWriter federation.StatusWriter
	// Namespace restricts Run to one namespace. Default: all.
	Namespace string
	// ControlPlaneNamespace is the control plane's own namespace on the host (the clusters'
	// credentials, its Leases): no Secret there ever follows a workload
	// (federation.Credentials). Default: federation.DefaultNamespace ("fedkit-system").
	ControlPlaneNamespace string
	// Gate is where every delete of the loop goes (a generated Federated<ConfigMap|Secret|
	// ServiceAccount|PersistentVolumeClaim>, [Write.GateWrite]): package gate checks it
	// carries federation.GeneratedByLabel: dependencies, outside the reserved namespaces,
	// and that a claim goes only once its host claim is gone. A refusal is an error of the
	// workloads' pass (their DependenciesResolved condition says it, naming the object and
	// the invariant), and the pass comes back after gate.RecheckAfter. Default: gate.New
	// with ControlPlaneNamespace.
	Gate *gate.Gate
	// Shard restricts Run to the namespaces this shard owns (the key of a pass is the
	// namespace, its name empty). Default: every namespace.
	Shard federation.Shard
	// Workers is how many namespaces Run passes over in parallel. Default: [DefaultWorkers].
	Workers int
	// CacheSyncTimeout bounds Run's wait for its first lists. Default:
	// [DefaultCacheSyncTimeout].
	CacheSyncTimeout time.Duration
	// Extractors add or replace the [Builtin] extractors, keyed by the workload's target GVK:
	// the extension point for other workload kinds (a CRD with a pod template registers
	// PodTemplateAt("spec", "template")). A nil Extractor removes the built-in one.
	Extractors map[schema.GroupVersionKind]Extractor
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

// workload is a federated type whose objects may have dependencies.
type workload struct {
	typ     federation.TypeConfig
	extract Extractor
}

// Dependencies is the loop that makes workloads' dependencies follow them (see the package
// documentation). Reconcile passes over one namespace; Run watches the host and calls it. It
// is safe for concurrent use.
type Dependencies struct {
	host      federation.ClusterClient
	workloads []workload
	// kinds are the federated types of the dependencies, by dependency kind.
	kinds      map[string]federation.TypeConfig
	opts       Options
	reconciles *fedmetrics.Reconciles
	// clusters decodes the host's Clusters, each once per resourceVersion.
	clusters loop.Clusters
	// mu guards namespaces: those whose last pass found workloads with
	// spec.propagateDependencies, which a Cluster's change concerns (Run).
	mu         gosync.Mutex
	namespaces map[string]bool
}

// New returns the loop for the workload types among types that have an Extractor (built in,
// in Options.Extractors, or from the kind's dependency rules: RulesExtractor). Dependencies are federated with the types among types whose
// target is a core/v1 ConfigMap, Secret, ServiceAccount or PersistentVolumeClaim, else with
// the built-in TypeConfigs. It starts nothing. It returns an error when host is nil, a type
// is incomplete, the shard is invalid (wrapping ErrInvalidOptions), or the metrics cannot be
// registered.
func New(host federation.ClusterClient, types []federation.TypeConfig, opts Options) (*Dependencies, error) {
	if host == nil {
		return nil, errors.New("dependencies: New: host client is nil")
	}
	if err := loop.ValidateShard(ErrInvalidOptions, opts.Shard); err != nil {
		return nil, fmt.Errorf("dependencies: New: %w", err)
	}
	opts.complete()
	extractors := Builtin()
	maps.Copy(extractors, opts.Extractors)
	d := &Dependencies{host: host, opts: opts, kinds: map[string]federation.TypeConfig{
		KindConfigMap:             federation.ConfigMapType,
		KindSecret:                federation.SecretType,
		KindServiceAccount:        federation.ServiceAccountType,
		KindPersistentVolumeClaim: federation.PersistentVolumeClaimType,
	}}
	for _, t := range types {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("dependencies: New: %w", err)
		}
		if t.Target.Group == "" && t.Target.Version == "v1" {
			if _, ok := d.kinds[t.Target.Kind]; ok {
				d.kinds[t.Target.Kind] = t
			}
		}
		if x := ExtractorFor(extractors, t); x != nil {
			d.workloads = append(d.workloads, workload{typ: t, extract: x})
		}
	}
	r, err := fedmetrics.NewReconciles(opts.Registerer, fedmetrics.LoopDependencies, "Namespace")
	if err != nil {
		return nil, fmt.Errorf("dependencies: New: %w", err)
	}
	d.reconciles = r
	return d, nil
}

// nativeGVR is the host resource of a dependency kind.
func (d *Dependencies) nativeGVR(kind string) schema.GroupVersionResource {
	return d.kinds[kind].TargetGVR()
}

// seen records whether namespace ns has workloads with spec.propagateDependencies.
func (d *Dependencies) seen(ns string, has bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case has && d.namespaces == nil:
		d.namespaces = map[string]bool{ns: true}
	case has:
		d.namespaces[ns] = true
	default:
		delete(d.namespaces, ns)
	}
}

// namespaceKeys are the keys of the namespaces seen holds, sorted.
func (d *Dependencies) namespaceKeys() []federation.Key {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]federation.Key, 0, len(d.namespaces))
	for _, ns := range slices.Sorted(maps.Keys(d.namespaces)) {
		out = append(out, federation.Key{Namespace: ns})
	}
	return out
}
