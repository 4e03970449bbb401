package controlplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/hostcache"
	"github.com/fedkit/fedkit/internal/statuswrite"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// ControlPlane runs every fedkit loop over one host and one ClusterSet: the cluster monitor,
// the scheduler, sync and the status collector of each federated type, the DNS loop and the
// ClusterSet's own Run. It is the optional composition on top of the loops: each loop keeps
// working alone, and an embedder who wants one loop, or runs them in its own manager, uses the
// loop's package instead.
//
// Run keeps each loop apart from the others: a loop whose resources the host does not serve,
// or whose Run fails, is reported (Status, the log) and retried, while the rest keep running.
// A ControlPlane is safe for concurrent use; Run runs once at a time.
type ControlPlane struct {
	host   federation.ClusterClient
	opts   Options
	specs  []spec
	shared []*part             // the loops every replica runs once: the ClusterSet's Run
	events *forwarder          // nil when the embedder gave Options.Events or disabled events
	status *statuswrite.Writer // the shared status writer; nil with a negative StatusWindow
	cache  *hostcache.Cache    // the loops' shared cache when New made it (Run runs it); else nil
	scheme *runtime.Scheme

	mu      sync.Mutex
	running bool
	// dynamic are the loops of the types FederatedTypeConfigs configure (Options.TypeConfigs),
	// while they run.
	dynamic []*part
	// units are the sets of loops: the one set New builds, or (Options.Sharding) one per
	// shard held while Run runs, in shard order.
	units []*unit

	// configured are the types FederatedTypeConfigs configure now, by shard and
	// configuration name (typeconfigs.go); typesChanged is closed, and replaced, when they
	// change, so that the loops over several types (servedTypes) run again with them.
	configured   map[configKey]federation.TypeConfig
	typesChanged chan struct{}
}

// unit is one set of the per-shard loops (monitor, scheduler, sync, collector, DNS): the
// whole control plane's, or one shard's.
type unit struct {
	shard federation.Shard
	loops []*part
}

// spec is the recipe of one loop, validated by New: Run builds a loop from it for each shard
// it claims.
type spec struct {
	name string
	// optional are resources the loop runs without (see servedTypes): the check lists them
	// too, and records in part.missing those not served.
	optional []resource
	// build makes the loop of a shard. What it needs the host to serve, and waits for in
	// the cache, is what the loop says it watches (its Watches), but the optional resources.
	build func(shard federation.Shard) (watcher, error)
	// ownCache: the loop watches through a Cache of its own (the embedder gave it one), not
	// Options.Cache, so Ready cannot see its informers.
	ownCache bool
}

// part is one loop of the control plane, with what the host must serve for it to start.
type part struct {
	name  string
	shard federation.Shard
	needs []resource
	run   func(ctx context.Context) error

	optional []resource
	ownCache bool // see spec

	// Guarded by ControlPlane.mu.
	status  LoopStatus
	missing []resource // of optional, those the last check found not served
}

// resource is something a loop lists on the host: the check before it starts lists it too.
type resource struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// watcher is a loop as the control plane runs it: its Run, and the host resources Run
// watches, which each loop states once (scheduler.Scheduler.Watches, fedsync.Syncer.Watches
// and the others'), so the control plane keeps no copy of them.
type watcher interface {
	Run(ctx context.Context) error
	Watches() []federation.Watch
}

// needsOf is what a loop that watches ws needs the host to serve, but optional.
func needsOf(ws []federation.Watch, optional []resource) []resource {
	out := make([]resource, 0, len(ws))
	for _, w := range ws {
		r := resource{gvr: w.GVR, namespace: w.Namespace}
		if !slices.Contains(optional, r) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// runner is what a ClusterSet with a reconcile of its own offers: kube.ClusterSet (watching
// Clusters and Secrets, hosting member caches), fake.Fleet (its simulated controllers).
type runner interface {
	Run(ctx context.Context) error
}

// New returns a ControlPlane for the host and clusters, with every loop built by its package's
// constructor from opts (see [Options] for the defaults and how common fields spread). It
// starts nothing and contacts nothing: call [ControlPlane.Run]. It returns an error when host
// or clusters is nil, opts is invalid (wrapping [ErrInvalidOptions]), or a loop's constructor
// fails (the error names the loop).
//
// With Options.Sharding the loops of each shard are built when Run claims the shard; New
// builds them once for shard 0 and discards them, so that every option is checked here and
// not when a shard is claimed.
func New(host federation.ClusterClient, clusters federation.ClusterSet, opts Options) (*ControlPlane, error) {
	switch {
	case host == nil:
		return nil, errors.New("controlplane: New: host client is nil")
	case clusters == nil:
		return nil, errors.New("controlplane: New: cluster set is nil")
	}
	var own *hostcache.Cache
	if opts.Cache == nil {
		// One informer per host resource for every loop and shard of the process.
		c, err := hostcache.New(host, hostcache.Options{Logger: opts.Logger})
		if err != nil {
			return nil, fmt.Errorf("controlplane: New: %w", err)
		}
		own, opts.Cache = c, c
	}
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("controlplane: New: %w", err)
	}
	cp := &ControlPlane{host: host, opts: opts, cache: own, configured: map[configKey]federation.TypeConfig{}, typesChanged: make(chan struct{})}
	if opts.Events == nil && !opts.Disable.Events {
		cp.events = &forwarder{window: opts.EventWindow, clock: opts.Clock}
		opts.Events = cp.events
		scheme, err := eventScheme()
		if err != nil {
			return nil, fmt.Errorf("controlplane: New: %w", err)
		}
		cp.scheme = scheme
	}
	// Events, like the other common fields, reach every loop that leaves its own recorder
	// unset.
	if opts.Events != nil {
		for _, r := range []*federation.EventRecorder{&opts.Scheduler.Events, &opts.Sync.Events, &opts.Status.Events, &opts.Monitor.Events, &opts.DNS.Events, &opts.Dependencies.Events, &opts.Propagation.Events, &opts.Autoscale.Events} {
			if *r == nil {
				*r = opts.Events
			}
		}
	}
	// Pending writes would outlive a shard's hand-over: with Sharding, each loop writes its
	// own status at once. A leader's run its writer for their term only (see work).
	if opts.StatusWindow >= 0 && opts.Sharding == nil {
		cp.status = statuswrite.New(host, statuswrite.Options{Window: opts.StatusWindow, Clock: opts.Clock, Logger: opts.Logger})
		for _, w := range []*federation.StatusWriter{&opts.Scheduler.StatusWriter, &opts.Sync.StatusWriter, &opts.Status.StatusWriter, &opts.Dependencies.StatusWriter} {
			if *w == nil {
				*w = cp.status
			}
		}
	}
	if r, ok := clusters.(runner); ok && !opts.Disable.ClusterSet {
		cp.shared = append(cp.shared, newPart(ClusterSetLoop, nil, r.Run, federation.Shard{}))
	}
	cp.specs = specs(cp, host, clusters, opts)
	shard := opts.Shard
	if opts.Sharding != nil {
		shard = federation.Shard{Index: 0, Count: opts.Sharding.Count}
	}
	u, err := cp.newUnit(shard)
	if err != nil {
		return nil, fmt.Errorf("controlplane: New: %w", err)
	}
	if opts.Sharding == nil {
		cp.units = []*unit{u}
	}
	return cp, nil
}

// newUnit builds the loops of shard from the specs.
func (cp *ControlPlane) newUnit(shard federation.Shard) (*unit, error) {
	u := &unit{shard: shard}
	for _, s := range cp.specs {
		w, err := s.build(shard)
		if err != nil {
			return nil, err
		}
		p := newPart(s.name, needsOf(w.Watches(), s.optional), w.Run, shard)
		p.optional, p.ownCache = s.optional, s.ownCache
		u.loops = append(u.loops, p)
	}
	return u, nil
}

func newPart(name string, needs []resource, run func(context.Context) error, shard federation.Shard) *part {
	return &part{name: name, shard: shard, needs: needs, run: run, status: LoopStatus{Name: name, Shard: shard, State: StateStopped}}
}

// specs are the recipes of the per-shard loops, in the order Status lists them. Each build
// gives the loop its shard; the loops' own Shard options are left unset (complete checks).
func specs(cp *ControlPlane, host federation.ClusterClient, clusters federation.ClusterSet, opts Options) []spec {
	var out []spec
	// cache is the Cache a loop's options give it: a loop with one of its own is marked.
	var cache *hostcache.Cache
	add := func(name string, build func(federation.Shard) (watcher, error)) {
		out = append(out, spec{name: name, build: build, ownCache: cache != opts.Cache})
	}
	if !opts.Disable.Monitor {
		cache = opts.Monitor.Cache
		add(MonitorLoop, func(shard federation.Shard) (watcher, error) {
			o := opts.Monitor
			o.Shard = shard
			return status.NewClusterMonitor(host, clusters, o)
		})
	}
	for _, t := range opts.Types {
		out = append(out, typeSpecs(host, clusters, opts, t)...)
	}
	if opts.TypeConfigs {
		cache = opts.Cache
		// The types the host's FederatedTypeConfigs configure: their loops start, restart
		// and stop with the configurations (typeconfigs.go).
		add(TypeConfigsLoop, func(shard federation.Shard) (watcher, error) {
			return composed{
				run:     cp.runTypeConfigs(host, clusters, opts, shard),
				watches: []federation.Watch{{GVR: federation.FederatedTypeConfigGVR}},
			}, nil
		})
	}
	for _, t := range propagation.DefaultTypes(opts.Types) {
		if opts.Disable.Propagation {
			break
		}
		// One loop per type, as for the others: a type whose CRD the host lacks stops only
		// its own.
		cache = opts.Propagation.Cache
		add(PropagationLoop+"/"+t.Federated.Kind, func(shard federation.Shard) (watcher, error) {
			o := opts.Propagation
			o.Shard = shard
			p, err := propagation.New(host, []federation.TypeConfig{t}, o)
			if err != nil {
				return nil, fmt.Errorf("propagation for %s: %w", t.Federated.Kind, err)
			}
			return p, nil
		})
	}
	if propagated := propagation.DefaultTypes(opts.Types); !opts.Disable.Propagation && len(propagated) > 0 {
		// One monitor writes every policy's status, over the propagated types the host
		// serves (their native and federated resources).
		ns := opts.Propagation.Namespace
		add(PolicyMonitorLoop, func(shard federation.Shard) (watcher, error) {
			o := opts.Propagation
			o.Shard = shard
			build := func(types []federation.TypeConfig) (watcher, error) {
				m, err := propagation.NewPolicyMonitor(host, types, o)
				if err != nil {
					return nil, fmt.Errorf("policy monitor: %w", err)
				}
				return m, nil
			}
			return cp.servedTypes(PolicyMonitorLoop, shard, ns, nil, propagated, nil, build)
		})
		for _, t := range propagated {
			out[len(out)-1].optional = append(out[len(out)-1].optional, federatedOf(t, ns))
		}
	}
	if !opts.Disable.DNS {
		cache = opts.DNS.Cache
		add(DNSLoop, func(shard federation.Shard) (watcher, error) {
			o := opts.DNS
			o.Shard = shard
			return dnsrecord.New(host, clusters, o)
		})
	}
	if spec, ok := autoscaleSpec(cp, host, clusters, opts); ok {
		cache = opts.Autoscale.Cache
		out = append(out, spec(cache != opts.Cache))
	}
	// The dependencies loop runs when some type of Types is a workload it has an extractor
	// for (built in, Options.Dependencies.Extractors, or the kind's dependency rules), or
	// when a FederatedTypeConfig may configure one (Options.TypeConfigs) and Types has a
	// kind to follow it: a control plane of ConfigMaps alone has nothing to follow.
	extractors := dependencies.Builtin()
	maps.Copy(extractors, opts.Dependencies.Extractors)
	follows := func(t federation.TypeConfig) bool { return dependencies.ExtractorFor(extractors, t) != nil }
	// What the loop needs: what it watches (the Clusters, the dependency kinds' federated
	// types and native objects). The workload types are optional: it runs over those the
	// host serves (a platform team installs the CRDs of the types it federates only) and
	// picks up the others once served, and those FederatedTypeConfigs configure as they do.
	var fixed, optional []federation.TypeConfig
	for _, t := range opts.Types {
		if follows(t) {
			optional = append(optional, t)
		} else {
			fixed = append(fixed, t)
		}
	}
	var configured func(federation.TypeConfig) bool
	if opts.TypeConfigs {
		configured = follows
	}
	if !opts.Disable.Dependencies && (len(optional) > 0 || configured != nil && len(fixed) > 0) {
		ns := opts.Dependencies.Namespace
		cache = opts.Dependencies.Cache
		add(DependenciesLoop, func(shard federation.Shard) (watcher, error) {
			o := opts.Dependencies
			o.Shard = shard
			build := func(types []federation.TypeConfig) (watcher, error) {
				return dependencies.New(host, types, o)
			}
			return cp.servedTypes(DependenciesLoop, shard, ns, fixed, optional, configured, build)
		})
		for _, t := range optional {
			out[len(out)-1].optional = append(out[len(out)-1].optional, federatedOf(t, ns))
		}
	}
	return out
}

// autoscaleSpec is the recipe of the autoscaler (package autoscale), unless opts disables it
// or no type it may scale is divisible: it runs over the divisible types of Types the host
// serves (optional, as the dependencies loop's workloads), and those FederatedTypeConfigs
// configure with Options.TypeConfigs.
func autoscaleSpec(cp *ControlPlane, host federation.ClusterClient, clusters federation.ClusterSet, opts Options) (func(ownCache bool) spec, bool) {
	divisible := func(t federation.TypeConfig) bool { return t.Divisible() }
	optional := slices.Clone(opts.Autoscale.Types)
	if optional == nil {
		optional = slices.DeleteFunc(slices.Clone(opts.Types), func(t federation.TypeConfig) bool { return !divisible(t) })
	}
	var configured func(federation.TypeConfig) bool
	if opts.TypeConfigs && opts.Autoscale.Types == nil {
		configured = divisible
	}
	if opts.Disable.Autoscale || len(optional) == 0 && configured == nil {
		return nil, false
	}
	ns := opts.Autoscale.Namespace
	return func(ownCache bool) spec {
		s := spec{name: AutoscaleLoop, ownCache: ownCache, build: func(shard federation.Shard) (watcher, error) {
			o := opts.Autoscale
			o.Shard = shard
			build := func(types []federation.TypeConfig) (watcher, error) {
				// Not nil, even when empty: nil is autoscale's default (every built-in
				// divisible type), and these are the types the host serves.
				o.Types = append([]federation.TypeConfig{}, types...)
				return autoscale.New(host, clusters, o)
			}
			return cp.servedTypes(AutoscaleLoop, shard, ns, nil, optional, configured, build)
		}}
		for _, t := range optional {
			s.optional = append(s.optional, federatedOf(t, ns))
		}
		return s
	}, true
}

// typeSpecs are the recipes of t's scheduler, sync and status collector (those opts does not
// disable), each named "<loop>/<FederatedKind>".
func typeSpecs(host federation.ClusterClient, clusters federation.ClusterSet, opts Options, t federation.TypeConfig) []spec {
	var out []spec
	var cache *hostcache.Cache
	add := func(name string, build func(federation.Shard) (watcher, error)) {
		out = append(out, spec{name: name, build: build, ownCache: cache != opts.Cache})
	}
	kind := t.Federated.Kind
	if !opts.Disable.Scheduler {
		cache = opts.Scheduler.Cache
		add("scheduler/"+kind, func(shard federation.Shard) (watcher, error) {
			o := opts.Scheduler
			o.Shard = shard
			s, err := scheduler.New(host, t, o)
			if err != nil {
				return nil, fmt.Errorf("scheduler for %s: %w", kind, err)
			}
			return s, nil
		})
	}
	if !opts.Disable.Sync {
		cache = opts.Sync.Cache
		add("sync/"+kind, func(shard federation.Shard) (watcher, error) {
			o := opts.Sync
			o.Shard = shard
			// The scheduler runs for the type, over every object sync handles: sync
			// waits for its schedule rather than push the template's replica count
			// before it (see fedsync.Options.WaitForScheduler).
			o.WaitForScheduler = o.WaitForScheduler || schedules(t, opts)
			s, err := fedsync.New(host, clusters, t, o)
			if err != nil {
				return nil, fmt.Errorf("sync for %s: %w", kind, err)
			}
			return s, nil
		})
	}
	if !opts.Disable.Status {
		cache = opts.Status.Cache
		add("status/"+kind, func(shard federation.Shard) (watcher, error) {
			o := opts.Status
			o.Shard = shard
			c, err := status.New(host, clusters, t, o)
			if err != nil {
				return nil, fmt.Errorf("status collector for %s: %w", kind, err)
			}
			return c, nil
		})
	}
	return out
}

// schedules reports whether the control plane runs the scheduler for t over every object its
// sync handles: not when the scheduler is off, nor when the scheduler is restricted to a
// namespace sync is not (sync would wait forever for the objects of the others).
func schedules(t federation.TypeConfig, opts Options) bool {
	if opts.Disable.Scheduler {
		return false
	}
	return !t.FederatedNamespaced() || opts.Scheduler.Namespace == "" || opts.Scheduler.Namespace == opts.Sync.Namespace
}

// federatedOf is t's federated resource, as a loop restricted to namespace lists it.
func federatedOf(t federation.TypeConfig, namespace string) resource {
	if !t.FederatedNamespaced() {
		namespace = ""
	}
	return resource{gvr: t.FederatedGVR(), namespace: namespace}
}

// Names of the loops that are not per type, as Status reports them. The per-type loops are
// "scheduler/<FederatedKind>", "sync/<FederatedKind>" and "status/<FederatedKind>".
const (
	ClusterSetLoop = "cluster-set"
	MonitorLoop    = "cluster-monitor"
	DNSLoop        = "dnsrecord"
	// DependenciesLoop makes workloads' dependencies follow them (package dependencies).
	DependenciesLoop = "dependencies"
	// PropagationLoop prefixes the propagation loops, one per namespaced type:
	// "propagation/<FederatedKind>".
	PropagationLoop = "propagation"
	// PolicyMonitorLoop writes the propagation policies' status (propagation.PolicyMonitor).
	PolicyMonitorLoop = "propagation/policies"
	// TypeConfigsLoop reads the host's FederatedTypeConfigs (Options.TypeConfigs) and runs
	// the loops of the types they configure.
	TypeConfigsLoop = "typeconfigs"
	// AutoscaleLoop writes the fleet totals of autoscaled ReplicaSchedulingPreferences
	// (package autoscale).
	AutoscaleLoop = "autoscale"
)

// eventScheme is the event recorder's scheme, for the object references of events. The loops
// record events on objects that carry their apiVersion and kind (unstructured, or decoded from
// it), which need no scheme; it knows fedkit's typed objects for the others.
func eventScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := federation.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := dnsrecord.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
