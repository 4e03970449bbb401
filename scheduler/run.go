package scheduler

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Run schedules until ctx is done: it watches the federated objects of its type, the
// ReplicaSchedulingPreferences (a change reschedules the object of the same name) and the
// Clusters (a change reschedules every object), and calls Reconcile with Options.Workers
// workers. Failures are retried with exponential backoff; terminal ones wait for a change.
//
// Run blocks until ctx is done and returns nil after every goroutine it started has exited. It
// has the func(context.Context) error shape, so a controller-runtime manager can run it as
// manager.RunnableFunc(s.Run).
func (s *Scheduler) Run(ctx context.Context) error {
	err := loop.Run(ctx, s.host, s, []loop.Source{
		{GVR: s.typ.FederatedGVR(), Namespace: s.opts.Namespace},
		{GVR: federation.ReplicaSchedulingPreferenceGVR, Namespace: s.opts.Namespace},
		{GVR: federation.ClusterGVR, Broadcast: true},
	}, loop.Options{
		Name:    "scheduler/" + s.typ.Federated.Kind,
		Workers: s.opts.Workers,
		Clock:   s.opts.Clock,
		Logger:  s.opts.Logger,
	})
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	return nil
}
