package soak

import (
	"context"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// The configured kinds' loops: each set runs, beside the loops of [Kinds], the loops of the
// types the host's FederatedTypeConfigs configure, as package controlplane's typeconfigs loop
// runs them: controlplane.DecideTypeConfig says what runs for each configuration, and
// controlplane.ReportTypeConfig writes its Ready condition (from the first set). The
// dependencies loop is built again with them whenever they change.

// configuredKind is one configuration's loops in a set.
type configuredKind struct {
	run       controlplane.RunningType
	scheduler *scheduler.Scheduler
	syncer    *fedsync.Syncer
	collector *status.Collector
}

// typeConfigs reconciles every FederatedTypeConfig in every set: a pass of the typeconfigs loop.
func (l *loops) typeConfigs(ctx context.Context) {
	names := keysOf(l.w, federation.FederatedTypeConfigGVR)
	for _, s := range l.sets {
		before := s.configuredTypes()
		for _, name := range sortedKeys(s.configured) {
			if !slices.ContainsFunc(names, func(k federation.Key) bool { return k.Name == name }) {
				delete(s.configured, name)
			}
		}
		for _, k := range names {
			if err := s.reconcileTypeConfig(ctx, l.w, k.Name); err != nil {
				l.w.traceLine("error: typeconfigs %s: %v", k.Name, err)
			}
		}
		if after := s.configuredTypes(); !slices.EqualFunc(before, after, func(a, b federation.TypeConfig) bool { return a.String() == b.String() && a.Federated == b.Federated }) {
			if err := s.buildDependencies(l.w, after); err != nil {
				l.w.violate(RuleLoopsHealthy, "dependencies", "built again with the configured types %v: %v", after, err)
			}
		}
	}
}

// reconcileTypeConfig is the typeconfigs loop's pass over configuration name in set s.
func (s *loopSet) reconcileTypeConfig(ctx context.Context, w *World, name string) error {
	u, err := w.Host.Get(ctx, federation.FederatedTypeConfigGVR, "", name)
	if err != nil {
		return err // gone meanwhile, or an injected error: the next round sees
	}
	ftc := &federation.FederatedTypeConfig{}
	if err := federation.FromUnstructured(u, ftc); err != nil {
		return s.reportTypeConfig(ctx, w, name, metav1.ConditionFalse, controlplane.ReasonInvalidTypeConfig, err.Error())
	}
	running := map[string]controlplane.RunningType{}
	for n, c := range s.configured {
		running[n] = c.run
	}
	d := controlplane.DecideTypeConfig(ftc, kinds(), running)
	switch {
	case d.Run == nil:
		delete(s.configured, name)
	case d.Restart:
		c, err := newConfiguredKind(w, s, *d.Run)
		if err != nil {
			delete(s.configured, name)
			return err
		}
		s.configured[name] = c
	default:
		s.configured[name].run.Generation = d.Run.Generation
	}
	msg := d.Message
	if d.Status == metav1.ConditionTrue {
		kind := d.Run.Type.Federated.Kind
		msg += ": " + strings.Join([]string{"scheduler/" + kind, "sync/" + kind, "status/" + kind}, ", ")
	}
	return s.reportTypeConfig(ctx, w, name, d.Status, d.Reason, msg)
}

func (s *loopSet) reportTypeConfig(ctx context.Context, w *World, name string, st metav1.ConditionStatus, reason, msg string) error {
	if s.shard.Sharded() && s.shard.Index != 0 {
		return nil
	}
	return controlplane.ReportTypeConfig(ctx, w.Host, name, st, reason, msg, w.Clock.Now(), w)
}

// newConfiguredKind builds a configured type's scheduler, sync and collector, as newLoopSet
// builds them for [Kinds].
func newConfiguredKind(w *World, s *loopSet, run controlplane.RunningType) (*configuredKind, error) {
	c := &configuredKind{run: run}
	typ := run.Type
	var err error
	if c.scheduler, err = scheduler.New(w.Host, typ, scheduler.Options{Clock: w.Clock, Shard: s.shard, Registerer: s.metrics}); err != nil {
		return nil, err
	}
	so := fedsync.Options{Clock: w.Clock, Events: w, WaitForScheduler: true, Shard: s.shard, Registerer: s.metrics,
		ClusterConcurrency: 1, ClusterQPS: -1}
	if c.syncer, err = fedsync.New(w.Host, w.Fleet, typ, so); err != nil {
		return nil, err
	}
	co := status.Options{Clock: w.Clock, Shard: s.shard, Registerer: s.metrics, ClusterConcurrency: 1}
	if c.collector, err = status.New(w.Host, w.Fleet, typ, co); err != nil {
		return nil, err
	}
	return c, nil
}

// configuredTypes are the types s runs for configurations, by federated kind.
func (s *loopSet) configuredTypes() []federation.TypeConfig {
	out := make([]federation.TypeConfig, 0, len(s.configured))
	for _, name := range sortedKeys(s.configured) {
		out = append(out, s.configured[name].run.Type)
	}
	slices.SortFunc(out, func(a, b federation.TypeConfig) int { return strings.Compare(a.Federated.Kind, b.Federated.Kind) })
	return out
}

// buildDependencies builds s's dependencies loop over [Kinds] and the configured types.
func (s *loopSet) buildDependencies(w *World, configured []federation.TypeConfig) error {
	d, err := dependencies.New(w.Host, append(kinds(), configured...), dependencies.Options{Clock: w.Clock, Events: w, Shard: s.shard, Registerer: s.metrics})
	if err != nil {
		return err
	}
	s.dependencies = d
	return nil
}

// configuredRound runs the configured types' loops over their objects: for each (by
// federated kind, the first set's), the scheduler, sync and its Cluster pass; the collectors
// run in collectConfigured.
func (l *loops) configuredRound(ctx context.Context, clusters []federation.Key) [][]federation.Key {
	types := l.sets[0].configuredTypes()
	keys := make([][]federation.Key, len(types))
	for i, typ := range types {
		kind := typ.Federated.Kind
		keys[i] = keysOf(l.w, typ.FederatedGVR())
		l.each(ctx, "scheduler/"+kind, keys[i], func(s *loopSet) reconciler {
			return s.kindLoop(kind, func(c *configuredKind) reconciler { return c.scheduler })
		})
		l.each(ctx, "sync/"+kind, keys[i], func(s *loopSet) reconciler {
			return s.kindLoop(kind, func(c *configuredKind) reconciler { return c.syncer })
		})
		l.each(ctx, "sync/"+kind+"/clusters", clusters, func(s *loopSet) reconciler {
			return s.kindLoop(kind, func(c *configuredKind) reconciler { return clusterPass{c.syncer} })
		})
	}
	return keys
}

// collectConfigured runs the configured types' collectors over keys (configuredRound's).
func (l *loops) collectConfigured(ctx context.Context, keys [][]federation.Key) {
	for i, typ := range l.sets[0].configuredTypes() {
		if i >= len(keys) {
			break
		}
		kind := typ.Federated.Kind
		l.each(ctx, "status/"+kind, keys[i], func(s *loopSet) reconciler {
			return s.kindLoop(kind, func(c *configuredKind) reconciler { return c.collector })
		})
	}
}

// kindLoop returns pick's loop of the configuration of federated kind in s; nil when s runs
// none (a set whose read of the configuration failed this round).
func (s *loopSet) kindLoop(kind string, pick func(*configuredKind) reconciler) reconciler {
	for _, name := range sortedKeys(s.configured) {
		if c := s.configured[name]; c.run.Type.Federated.Kind == kind {
			return pick(c)
		}
	}
	return nil
}
