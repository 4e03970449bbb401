package status

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Run collects until ctx is done. It watches the federated objects of its type and the
// Clusters on the host, and pulls each object's members every Options.Period (the Result of
// every pass asks for the next) with Options.Workers workers. Failures are retried with
// exponential backoff; terminal ones wait for a change.
//
// A federated object is collected at once when it appears, when its generation changes, when
// sync changes the clusters status.clusters lists or what it says it propagated; status
// writes of other kinds (the scheduler's, the Collector's own) do not requeue it. A Cluster whose Ready condition
// changes requeues every object, since freshness depends on it; the monitor's heartbeats do
// not. With a ClusterSet that implements federation.MemberCache, a change of a member object
// requeues the federated object its federation.FederatedNameLabel and
// federation.FederatedNamespaceLabel name, so a rollout in a member shows up without waiting
// for the period.
//
// Run's passes read the federated objects and Clusters from its informers and the members
// from the member caches, so a pass costs no API reads; the status write goes to the API
// server, locked on the resourceVersion read.
//
// Run returns an error when its caches do not sync within Options.CacheSyncTimeout (the
// host does not serve the federated type's CRD, say). Otherwise it blocks until ctx is done
// and returns nil after every goroutine it started has exited. What it counted in
// fedkit_status_stale_members is taken back when it returns. It has the
// func(context.Context) error shape, so a controller-runtime manager can run it as
// manager.RunnableFunc(c.Run).
func (c *Collector) Run(ctx context.Context) error {
	l, err := loop.New(c.host, c.sources(), loop.Options{
		Name:             "status/" + c.typ.Federated.Kind,
		Workers:          c.opts.Workers,
		Clock:            c.opts.Clock,
		Logger:           c.opts.Logger,
		CacheSyncTimeout: c.opts.CacheSyncTimeout,
		Shard:            c.opts.Shard,
		Registerer:       c.opts.Registerer,
		Cache:            c.opts.Cache,
	})
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	remove, _ := federation.WatchMemberChanges(c.clusters, c.typ.TargetGVR(), func(_ string, obj *unstructured.Unstructured) {
		if key, ok := ownerKey(obj); ok && (c.opts.Namespace == "" || key.Namespace == c.opts.Namespace) {
			l.Enqueue(key)
		}
	})
	defer remove()
	if w := c.opts.StatusWriter; w != nil {
		// Sync's change, not written yet, lists the clusters to collect from.
		w.Notify(ctx, fedmetrics.LoopStatus, c.typ.FederatedGVR(), func(from string, key federation.Key) {
			if from == fedmetrics.LoopSync {
				l.Enqueue(key)
			}
		})
	}
	cached := l.Reader()
	reconcile := func(ctx context.Context, key federation.Key) (federation.Result, error) {
		return c.reconcileFrom(ctx, cached, true, key)
	}
	err = l.Run(ctx, loop.ReconcilerFunc(reconcile))
	c.metrics.forgetAll() // every worker has returned: nothing sets the gauge any more
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// Run monitors until ctx is done: it watches the Clusters on the host, probes a new one at
// once and every one every MonitorOptions.Period (the Result of every pass asks for the
// next), with MonitorOptions.Workers workers. A deleted Cluster's state is released. The
// monitor's own writes (status, its taints) do not requeue a Cluster; a change of its spec
// by someone else does.
//
// Run reads the Clusters from its informer. It returns an error when its cache does not sync
// within MonitorOptions.CacheSyncTimeout; otherwise it blocks until ctx is done and returns
// nil after every goroutine it started has exited, and the fedkit_cluster_ready series it
// set are deleted.
func (m *ClusterMonitor) Run(ctx context.Context) error {
	l, err := loop.New(m.host, m.sources(), loop.Options{
		Name:             "cluster-monitor",
		Workers:          m.opts.Workers,
		Clock:            m.opts.Clock,
		Logger:           m.opts.Logger,
		CacheSyncTimeout: m.opts.CacheSyncTimeout,
		Shard:            m.opts.Shard,
		Registerer:       m.opts.Registerer,
		Cache:            m.opts.Cache,
	})
	if err == nil {
		cached := l.Reader()
		err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return m.reconcileFrom(ctx, cached, key)
		}))
		m.metrics.ready.forgetAll() // a stopped monitor (a lost election) shows no readiness
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// placementChanged reports whether a federated object changed in a way the Collector must
// answer at once: its generation, its deletion, the clusters status.clusters lists, or what
// sync says it propagated (the Ready condition depends on it).
func placementChanged(old, new *unstructured.Unstructured) bool {
	return old.GetGeneration() != new.GetGeneration() ||
		(old.GetDeletionTimestamp() == nil) != (new.GetDeletionTimestamp() == nil) ||
		!slices.Equal(listedClusters(old), listedClusters(new)) ||
		!apiequality.Semantic.DeepEqual(syncView(old), syncView(new))
}

// syncView is what sync wrote about propagation: status.observedGeneration, syncedRevision,
// rollout, each entry's propagation and revision, and the Propagated condition. The
// Collector's own writes never change it.
func syncView(u *unstructured.Unstructured) []any {
	st, _ := u.Object["status"].(map[string]any)
	view := []any{st["observedGeneration"], st["syncedRevision"], st["rollout"]}
	list, _ := st["clusters"].([]any)
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			view = append(view, m["propagation"], m["revision"])
		}
	}
	conds, _ := st["conditions"].([]any)
	for _, it := range conds {
		if m, ok := it.(map[string]any); ok && m["type"] == federation.ConditionPropagated {
			view = append(view, m["status"], m["observedGeneration"], m["reason"])
		}
	}
	return view
}

func listedClusters(u *unstructured.Unstructured) []string {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
	names := make([]string, 0, len(list))
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			n, _ := m["name"].(string)
			names = append(names, n)
		}
	}
	return names
}

// readinessChanged reports whether a Cluster's Ready condition changed status.
func readinessChanged(old, new *unstructured.Unstructured) bool {
	return readyConditionTrue(old.Object) != readyConditionTrue(new.Object)
}

// specChanged reports whether a Cluster's spec changed, the monitor's own taints aside.
func specChanged(old, new *unstructured.Unstructured) bool {
	return !apiequality.Semantic.DeepEqual(specView(old), specView(new))
}

func specView(u *unstructured.Unstructured) map[string]any {
	spec, _ := u.Object["spec"].(map[string]any)
	view := make(map[string]any, len(spec))
	for k, v := range spec {
		view[k] = v
	}
	if list, ok := spec["taints"].([]any); ok {
		var user []any
		for _, t := range list {
			if m, ok := t.(map[string]any); !ok || !monitorTaint(fmt.Sprint(m["key"])) {
				user = append(user, t)
			}
		}
		view["taints"] = user
	}
	return view
}

// ownerKey returns the federated object a member object belongs to, from its labels.
func ownerKey(obj *unstructured.Unstructured) (federation.Key, bool) {
	labels := obj.GetLabels()
	name := labels[federation.FederatedNameLabel]
	if name == "" {
		return federation.Key{}, false
	}
	return federation.Key{Namespace: labels[federation.FederatedNamespaceLabel], Name: name}, true
}

// Watches returns the host resources Run watches: the federated type (in
// Options.Namespace) and the Clusters. The member objects it reads come from the cluster
// set's member caches.
func (c *Collector) Watches() []federation.Watch { return loop.Watches(c.sources()) }

// sources are what the Collector's Run watches, and how a change maps to keys.
func (c *Collector) sources() []loop.Source {
	return []loop.Source{
		{GVR: c.typ.FederatedGVR(), Namespace: c.opts.Namespace, Changed: placementChanged},
		{GVR: federation.ClusterGVR, Broadcast: true, Changed: readinessChanged,
			Deleted: func(u *unstructured.Unstructured) { c.metrics.forgetCluster(u.GetName()) }},
	}
}

// Watches returns the host resources Run watches: the Clusters.
func (m *ClusterMonitor) Watches() []federation.Watch { return loop.Watches(m.sources()) }

// sources are what the monitor's Run watches.
func (m *ClusterMonitor) sources() []loop.Source {
	return []loop.Source{{GVR: federation.ClusterGVR, Changed: specChanged}}
}
