package soak

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// ControlPlane is the control plane under test, as the soak drives it.
type ControlPlane interface {
	// Round reconciles every key of every loop once, one Reconcile at a time, in a fixed
	// order, and returns when all are done (deterministic mode). Errors a loop would retry
	// are not errors of the round; the round returns an error only when it cannot go on.
	Round(ctx context.Context) error
	// Run runs every loop's Run until ctx is done and returns after all their goroutines
	// have exited (Run mode).
	Run(ctx context.Context) error
}

// Factory builds the control plane under test over a World. [Loops] is fedkit's; an embedder
// passes its own to soak its own loops.
type Factory func(w *World) (ControlPlane, error)

// reconciler is the one method every loop has.
type reconciler interface {
	Reconcile(ctx context.Context, key federation.Key) (federation.Result, error)
}

// loops is the default control plane: every fedkit loop, built with New(deps, Options) on the
// World's host, fleet and clock, as an embedder builds them; one set per shard.
type loops struct {
	w    *World
	sets []*loopSet
}

// loopSet is one control plane's loops, over the keys of its shard.
type loopSet struct {
	shard        federation.Shard
	metrics      *busyRegistry // the set's work queues and reconciles, for [loops.Busy]
	monitor      *status.ClusterMonitor
	schedulers   []*scheduler.Scheduler
	syncers      []*fedsync.Syncer
	collectors   []*status.Collector
	dns          *dnsrecord.Controller
	propagation  *propagation.Propagator
	dependencies *dependencies.Dependencies
	configured   map[string]*configuredKind // by FederatedTypeConfig name (see controlplane_kinds.go)
	autoscaler   *autoscale.Autoscaler
}

// Loops is the [Factory] of fedkit's own loops, one set per shard (Config.Shards, each with
// Options.Shard): the cluster monitor; a scheduler, a syncer and a collector for each of
// [Kinds]; the DNS loop; the propagation loop over Deployments; the dependencies loop; the
// autoscaler. In deterministic mode each loop touches one cluster at a time and sync's per-cluster rate
// limit is off (a wait on the fake clock would block a round that nobody steps).
func Loops(w *World) (ControlPlane, error) {
	l := &loops{w: w}
	for i := range w.Config.Shards {
		shard := federation.Shard{Index: i, Count: w.Config.Shards}
		if w.Config.Shards == 1 {
			shard = federation.Shard{}
		}
		set, err := newLoopSet(w, shard)
		if err != nil {
			return nil, err
		}
		l.sets = append(l.sets, set)
	}
	return l, nil
}

func newLoopSet(w *World, shard federation.Shard) (*loopSet, error) {
	det := !w.Config.Run
	l := &loopSet{shard: shard, metrics: newBusyRegistry(), configured: map[string]*configuredKind{}} // a registry per set: the sets' loops have the same names
	var err error
	if l.monitor, err = status.NewClusterMonitor(w.Host, w.Fleet, status.MonitorOptions{Clock: w.Clock, Shard: shard, Registerer: l.metrics}); err != nil {
		return nil, err
	}
	for _, typ := range kinds() {
		s, err := scheduler.New(w.Host, typ, scheduler.Options{Clock: w.Clock, Shard: shard, Registerer: l.metrics})
		if err != nil {
			return nil, err
		}
		so := fedsync.Options{Clock: w.Clock, Events: w, WaitForScheduler: true, Shard: shard, Registerer: l.metrics} // as package controlplane runs it
		co := status.Options{Clock: w.Clock, Shard: shard, Registerer: l.metrics}
		if det {
			so.ClusterConcurrency, so.ClusterQPS, co.ClusterConcurrency = 1, -1, 1
		}
		y, err := fedsync.New(w.Host, w.Fleet, typ, so)
		if err != nil {
			return nil, err
		}
		c, err := status.New(w.Host, w.Fleet, typ, co)
		if err != nil {
			return nil, err
		}
		l.schedulers, l.syncers, l.collectors = append(l.schedulers, s), append(l.syncers, y), append(l.collectors, c)
	}
	if l.dns, err = dnsrecord.New(w.Host, w.Fleet, dnsrecord.Options{Clock: w.Clock, Shard: shard, Registerer: l.metrics}); err != nil {
		return nil, err
	}
	if l.propagation, err = propagation.New(w.Host, []federation.TypeConfig{federation.DeploymentType}, propagation.Options{Clock: w.Clock, Events: w, Shard: shard, Registerer: l.metrics}); err != nil {
		return nil, err
	}
	if l.dependencies, err = dependencies.New(w.Host, kinds(), dependencies.Options{Clock: w.Clock, Events: w, Shard: shard, Registerer: l.metrics}); err != nil {
		return nil, err
	}
	if l.autoscaler, err = autoscale.New(w.Host, w.Fleet, autoscale.Options{Clock: w.Clock, Events: w, Shard: shard, Registerer: l.metrics}); err != nil {
		return nil, err
	}
	return l, nil
}

// reconcileTimeout bounds one Reconcile in real time. Nothing in a deterministic round waits
// for anything but the code under test, so a pass that takes this long is stuck (waiting on
// the fake clock, which nobody steps during a round).
const reconcileTimeout = 2 * time.Minute

// Round runs, in the order data flows, each loop of every shard over the keys its shard owns:
// the monitor over every Cluster; the propagation loop over every native Deployment; the
// dependencies loop over every namespace; the autoscaler over every preference; for each
// kind the scheduler, then sync (and its Cluster pass, which releases leaving Clusters), then
// the collector over every federated object; the DNS loop over every record.
func (l *loops) Round(ctx context.Context) error {
	w := l.w
	clusters := keysOf(w, federation.ClusterGVR)
	l.each(ctx, "monitor", clusters, func(s *loopSet) reconciler { return s.monitor })
	l.typeConfigs(ctx)
	natives := union(keysOf(w, deploymentsGVR), keysOf(w, federation.DeploymentType.FederatedGVR()))
	l.each(ctx, "propagation", natives, func(s *loopSet) reconciler { return s.propagation })
	l.each(ctx, "dependencies", namespacesOf(w), func(s *loopSet) reconciler { return s.dependencies })
	l.each(ctx, "autoscale", keysOf(w, federation.ReplicaSchedulingPreferenceGVR), func(s *loopSet) reconciler { return s.autoscaler })
	keys := make([][]federation.Key, len(kinds()))
	for i, typ := range kinds() {
		keys[i] = keysOf(w, typ.FederatedGVR())
		l.each(ctx, "scheduler/"+typ.Federated.Kind, keys[i], func(s *loopSet) reconciler { return s.schedulers[i] })
		l.each(ctx, "sync/"+typ.Federated.Kind, keys[i], func(s *loopSet) reconciler { return s.syncers[i] })
		l.each(ctx, "sync/"+typ.Federated.Kind+"/clusters", clusters, func(s *loopSet) reconciler { return clusterPass{s.syncers[i]} })
	}
	configured := l.configuredRound(ctx, clusters)
	// Nothing after the propagation and dependencies loops makes federated objects: the
	// collectors pass over the same keys (one deleted meanwhile is NotFound to them).
	for i, typ := range kinds() {
		l.each(ctx, "status/"+typ.Federated.Kind, keys[i], func(s *loopSet) reconciler { return s.collectors[i] })
	}
	l.collectConfigured(ctx, configured)
	l.each(ctx, "dns", keysOf(w, dnsrecord.ServiceDNSRecordGVR), func(s *loopSet) reconciler { return s.dns })
	return ctx.Err()
}

// each reconciles every key with the loop of the set whose shard owns it.
func (l *loops) each(ctx context.Context, loop string, keys []federation.Key, r func(*loopSet) reconciler) {
	for _, k := range keys {
		for _, s := range l.sets {
			if rec := r(s); rec != nil && s.shard.Owns(k) {
				l.call(ctx, loop, rec, k)
			}
		}
	}
}

// clusterPass is a Syncer's Cluster pass as a reconciler.
type clusterPass struct{ s *fedsync.Syncer }

func (c clusterPass) Reconcile(ctx context.Context, key federation.Key) (federation.Result, error) {
	return c.s.ReconcileCluster(ctx, key)
}

// call runs one Reconcile. A terminal error on the soak's input (which is always valid) and a
// pass that does not return are violations; other errors are retried by the next round.
func (l *loops) call(ctx context.Context, loop string, r reconciler, key federation.Key) {
	ctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
	defer cancel()
	_, err := r.Reconcile(ctx, key)
	if err != nil {
		l.w.traceLine("error: %s %s: %v", loop, key, err)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		l.w.violate(RuleLoopsHealthy, loop+" "+key.String(), "Reconcile did not return within %s (stuck on the fake clock?)", reconcileTimeout)
	case federation.IsTerminal(err):
		l.w.violate(RuleLoopsHealthy, loop+" "+key.String(), "terminal error on valid input: %v", err)
	}
}

// Run runs every loop's Run of every shard until ctx is done.
func (l *loops) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make(chan error, 128)
	run := func(name string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	for _, s := range l.sets {
		shard := " (shard " + s.shard.String() + ")"
		run("monitor"+shard, s.monitor.Run)
		for i, typ := range kinds() {
			run("scheduler/"+typ.Federated.Kind+shard, s.schedulers[i].Run)
			run("sync/"+typ.Federated.Kind+shard, s.syncers[i].Run)
			run("status/"+typ.Federated.Kind+shard, s.collectors[i].Run)
		}
		run("dns"+shard, s.dns.Run)
		run("propagation"+shard, s.propagation.Run)
		run("dependencies"+shard, s.dependencies.Run)
		run("autoscale"+shard, s.autoscaler.Run)
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// union returns the keys of a and b, each once, in order.
func union(a, b []federation.Key) []federation.Key {
	seen := map[federation.Key]bool{}
	var out []federation.Key
	for _, k := range append(a, b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// namespacesOf lists the host's namespaces as keys (name empty): the dependencies loop's
// passes.
func namespacesOf(w *World) []federation.Key {
	var out []federation.Key
	for _, k := range keysOf(w, federation.NamespaceType.TargetGVR()) {
		out = append(out, federation.Key{Namespace: k.Name})
	}
	return out
}

// Busy returns how many keys the loops' queues hold ready and how many reconciles run now, in
// every set (workqueue_depth and controller_runtime_active_workers, summed): Run mode steps the clock
// only when both are zero, so a timer a pass started (a read's timeout) never fires on a
// clock that jumped while the pass waited for a core. A key waiting for its requeue time is
// not counted: the clock brings it.
func (l *loops) Busy() (int, error) {
	n := 0.0
	for _, set := range l.sets {
		families, err := set.metrics.busy.Gather()
		if err != nil {
			return 0, fmt.Errorf("soak: gather the loops' metrics of shard %d: %w", set.shard.Index, err)
		}
		for _, f := range families {
			if f.GetName() != "workqueue_depth" && f.GetName() != "controller_runtime_active_workers" {
				continue
			}
			for _, m := range f.GetMetric() {
				n += m.GetGauge().GetValue()
			}
		}
	}
	return int(n), nil
}

// busyRegistry is a loop set's prometheus registry. The collectors of the two families Busy
// sums (workqueue_depth, controller_runtime_active_workers) also go into a registry of their
// own, which Busy gathers alone: gathering every family (histograms included) at every poll
// of Run mode's idle wait took most of Run mode's CPU.
type busyRegistry struct {
	*prometheus.Registry
	busy *prometheus.Registry
}

func newBusyRegistry() *busyRegistry {
	return &busyRegistry{Registry: prometheus.NewRegistry(), busy: prometheus.NewRegistry()}
}

// Register registers c, and also into the busy registry when it is of a family Busy sums.
func (r *busyRegistry) Register(c prometheus.Collector) error {
	if err := r.Registry.Register(c); err != nil {
		return err
	}
	if busyFamily(c) {
		return r.busy.Register(c)
	}
	return nil
}

// MustRegister registers cs as Register does, panicking as prometheus.Registry does.
func (r *busyRegistry) MustRegister(cs ...prometheus.Collector) {
	r.Registry.MustRegister(cs...)
	for _, c := range cs {
		if busyFamily(c) {
			r.busy.MustRegister(c)
		}
	}
}

// Unregister unregisters c from both registries.
func (r *busyRegistry) Unregister(c prometheus.Collector) bool {
	r.busy.Unregister(c)
	return r.Registry.Unregister(c)
}

// busyFamilies are the families Busy sums. A Desc names its family only in its String form.
var busyFamilies = []string{`fqName: "workqueue_depth"`, `fqName: "controller_runtime_active_workers"`}

// busyFamily reports whether c describes one of busyFamilies.
func busyFamily(c prometheus.Collector) bool {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	found := false
	for d := range ch {
		found = found || slices.ContainsFunc(busyFamilies, func(f string) bool { return strings.Contains(d.String(), f) })
	}
	return found
}

// keysOf lists the keys of gvr's objects on the host as the harness sees them (no API call,
// no fault): the queue of a deterministic round.
func keysOf(w *World, gvr schema.GroupVersionResource) []federation.Key {
	objs := w.Host.Objects(gvr)
	out := make([]federation.Key, 0, len(objs))
	for _, o := range objs {
		out = append(out, federation.Key{Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	return out
}
