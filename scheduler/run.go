package scheduler

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Run schedules until ctx is done: it watches the federated objects of its type, the
// ReplicaSchedulingPreferences (a change reschedules the object of the same name) and the
// Clusters, and calls Reconcile with Options.Workers workers. Failures are retried with
// exponential backoff; terminal ones wait for a change.
//
// A Cluster change reschedules every object, but only when it can change a schedule: its
// labels, spec, deletion, the status of its conditions, its capacity or available resources.
// The cluster monitor's heartbeats (status.lastHeartbeatTime, condition timestamps and
// messages) do not: at 10,000 objects and 1,000 clusters each beat would otherwise cost
// 10,000 reconciles.
//
// Run's reconciles read the objects, preferences and Clusters from the informer caches Run
// keeps anyway, not from the API server, so a pass costs no reads; the status write still
// goes to the API server, guarded by the resourceVersion read. A Conflict caused by a cache
// that lags is retried like any other failure.
//
// Run returns an error when its caches do not sync within Options.CacheSyncTimeout, for
// instance when the host does not serve the ReplicaSchedulingPreference CRD; the error names
// the resource, and the list failures reach Options.Logger as they happen. Otherwise Run
// blocks until ctx is done and returns nil after every goroutine it started has exited. It
// has the func(context.Context) error shape, so a controller-runtime manager can run it as
// manager.RunnableFunc(s.Run).
func (s *Scheduler) Run(ctx context.Context) error {
	l, err := loop.New(s.host, s.sources(), loop.Options{
		Name:             "scheduler/" + s.typ.Federated.Kind,
		Workers:          s.opts.Workers,
		Clock:            s.opts.Clock,
		Logger:           s.opts.Logger,
		CacheSyncTimeout: s.opts.CacheSyncTimeout,
		Shard:            s.opts.Shard,
		Registerer:       s.opts.Registerer,
		Cache:            s.opts.Cache,
	})
	if err == nil {
		cached := l.Reader()
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return s.reconcileFrom(ctx, cached, key)
		}))
	}
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	return nil
}

// Watches returns the host resources Run watches: the federated type, the
// ReplicaSchedulingPreferences (in Options.Namespace) and the Clusters.
func (s *Scheduler) Watches() []federation.Watch { return loop.Watches(s.sources()) }

// sources are what Run watches, and how a change maps to keys.
func (s *Scheduler) sources() []loop.Source {
	return []loop.Source{
		{GVR: s.typ.FederatedGVR(), Namespace: s.opts.Namespace},
		{GVR: federation.ReplicaSchedulingPreferenceGVR, Namespace: s.opts.Namespace},
		{GVR: federation.ClusterGVR, Broadcast: true, Changed: loop.ClusterChanged},
	}
}
