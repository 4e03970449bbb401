package autoscale

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// Run autoscales until ctx is done: it watches the ReplicaSchedulingPreferences (a change of
// spec reconciles one; the autoscaler's own status writes do not), the federated objects of
// Options.Types (a new schedule reconciles the preference of the same name) and the Clusters
// (a change of readiness reconciles every preference), and calls Reconcile with
// Options.Workers workers; every autoscaled preference is looked at again each
// Options.ResyncPeriod. Reads come from the informer caches Run keeps; the members are read
// live, through Options.Source.
//
// Run returns an error when its caches do not sync within Options.CacheSyncTimeout (a CRD
// missing on the host). Otherwise it blocks until ctx is done and returns nil after every
// goroutine it started has exited. It has the func(context.Context) error shape.
func (a *Autoscaler) Run(ctx context.Context) error {
	l, err := loop.New(a.host, a.sources(), loop.Options{
		Name:             "autoscale",
		Workers:          a.opts.Workers,
		Clock:            a.opts.Clock,
		Logger:           a.opts.Logger,
		CacheSyncTimeout: a.opts.CacheSyncTimeout,
		Shard:            a.opts.Shard,
		Registerer:       a.opts.Registerer,
		Cache:            a.opts.Cache,
	})
	if err == nil {
		cached := l.Reader()
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return a.reconcileFrom(ctx, cached, key)
		}))
	}
	if err != nil {
		return fmt.Errorf("autoscale: %w", err)
	}
	return nil
}

// Watches returns what Run watches on the host: the ReplicaSchedulingPreferences, the
// federated objects of Options.Types and the Clusters (see federation.Watch).
func (a *Autoscaler) Watches() []federation.Watch { return loop.Watches(a.sources()) }

// sources are what Run watches, and how a change maps to keys.
func (a *Autoscaler) sources() []loop.Source {
	sources := []loop.Source{{GVR: federation.ReplicaSchedulingPreferenceGVR, Namespace: a.opts.Namespace, Changed: specChanged}}
	for _, t := range a.opts.Types {
		sources = append(sources, loop.Source{GVR: t.FederatedGVR(), Namespace: a.opts.Namespace, Changed: scheduleChanged})
	}
	return append(sources, loop.Source{GVR: federation.ClusterGVR, Broadcast: true, Changed: loop.ClusterChanged})
}

// specChanged lets a preference's update through unless only its status changed: the
// autoscaler's own writes do not start another pass.
func specChanged(old, new *unstructured.Unstructured) bool {
	return old.GetGeneration() != new.GetGeneration() || new.GetDeletionTimestamp() != nil
}

// scheduleChanged lets a federated object's update through when its status.schedule
// changed: the clusters the workload runs in.
func scheduleChanged(old, new *unstructured.Unstructured) bool {
	a, _, _ := unstructured.NestedFieldNoCopy(old.Object, "status", "schedule", "clusters")
	b, _, _ := unstructured.NestedFieldNoCopy(new.Object, "status", "schedule", "clusters")
	return !apiequality.Semantic.DeepEqual(a, b) || new.GetDeletionTimestamp() != nil
}
