package sync

import (
	"context"
	"fmt"
	gosync "sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
	"github.com/fedkit/fedkit/sync/plan"
)

// Run syncs until ctx is done. It watches, on the host, the federated objects of its type, the
// Clusters (a change that matters, such as a cluster turning Ready, requeues every object) and
// the revision history (a ControllerRevision deleted by hand is recorded again by the next
// pass over its object); and, when the cluster set offers member caches
// ([federation.MemberCache]), the managed member objects of every cluster sync reads, so a
// change made in a member (drift, a deletion) requeues the federated object at once. Sync's
// own writes (to members, and to the federated object's metadata and status) requeue nothing.
// Every object is also checked again every Options.ResyncPeriod.
//
// Run's passes read the host and the members from those caches, not from the API servers, so
// a pass over an object that is in sync costs no API call at all; writes go to the API
// servers, locked on the resourceVersion read (a cache that lags costs a Conflict and a retry).
// Options.Workers objects are synced at once; failures are retried with exponential backoff,
// and terminal ones wait for a change.
//
// Run returns an error when its caches do not sync within Options.CacheSyncTimeout (a host
// without the federated type's CRD, say), naming the resource. Otherwise it blocks until ctx is
// done and returns nil after every goroutine it started has exited. It has the
// func(context.Context) error shape, so a controller-runtime manager can run it as
// manager.RunnableFunc(s.Run).
func (s *Syncer) Run(ctx context.Context) error {
	// The two loops below share one cache: the Syncer's own when Options.Cache is nil.
	shared, ownCache := s.opts.Cache, false
	if shared == nil {
		c, err := loop.NewCache(s.host, loop.CacheOptions{Logger: s.opts.Logger})
		if err != nil {
			return fmt.Errorf("sync: %w", err)
		}
		shared, ownCache = c, true
	}
	opts := loop.Options{
		Name:             "sync/" + s.typ.Federated.Kind,
		Workers:          s.opts.Workers,
		Clock:            s.opts.Clock,
		Logger:           s.opts.Logger,
		CacheSyncTimeout: s.opts.CacheSyncTimeout,
		Shard:            s.opts.Shard,
		Registerer:       s.opts.Registerer,
		Cache:            shared,
	}
	l, err := loop.New(s.host, s.sources(), opts)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if w := s.opts.StatusWriter; w != nil {
		// The scheduler's change, not written yet, lets a pass that waited for it propagate.
		w.Notify(ctx, fedmetrics.LoopSync, s.typ.FederatedGVR(), func(from string, key federation.Key) {
			if from == fedmetrics.LoopScheduler {
				l.Enqueue(key)
			}
		})
	}
	// A second, small loop over the Clusters releases the ones leaving the federation
	// (ReconcileCluster) once the objects' passes have cleaned up there.
	clOpts := opts
	clOpts.Name, clOpts.Workers = opts.Name+"/clusters", 1
	cl, err := loop.New(s.host, []loop.Source{{GVR: federation.ClusterGVR}}, clOpts)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	s.mu.Lock()
	s.enqueue = l.Enqueue
	s.mu.Unlock()
	if s.namespaceType() {
		defer s.nsInUse.start(l.Enqueue)()
	}
	defer func() {
		s.mu.Lock()
		s.enqueue = nil
		s.mu.Unlock()
	}()
	// The handler only reads the object's labels, name and resourceVersion.
	remove, _ := federation.WatchMemberChanges(s.clusters, s.typ.TargetGVR(), func(cluster string, obj *unstructured.Unstructured) {
		key, ok := s.ownerOfMember(obj)
		leaving, own := s.memberChange(cluster, key, ok, obj.GetResourceVersion())
		if leaving {
			cl.Enqueue(federation.Key{Name: cluster}) // perhaps the last object there went
		}
		if !ok || own {
			return // not sync's, or sync's own write: nothing to react to
		}
		l.Enqueue(key)
	})
	defer remove()
	if s.typ.Namespaced {
		// An object waiting for its member namespace (a FederatedNamespace creates it) is
		// passed over again as soon as the namespace appears there.
		removeNS, _ := federation.WatchMemberChanges(s.clusters, namespaceGVR, func(cluster string, obj *unstructured.Unstructured) {
			if obj.GetDeletionTimestamp() == nil {
				l.Enqueue(s.namespaceWaiters(cluster, obj.GetName())...)
			}
		})
		defer removeNS()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg gosync.WaitGroup
	defer wg.Wait()
	if ownCache {
		wg.Go(func() { _ = shared.Run(ctx) }) // stops with the loops
	}
	clusterErr := make(chan error, 1)
	wg.Go(func() {
		cached := cl.Reader()
		clusterErr <- cl.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
			return s.reconcileCluster(ctx, key, cached)
		}))
		cancel() // one loop failing to start stops the other
	})
	w := startWriters(s.opts.Workers*s.opts.ClusterConcurrency, s.opts.Clock)
	defer w.stop() // after l.Run: no pass is left to hand it a write
	cached := l.Reader()
	err = l.Run(ctx, loop.ReconcilerFunc(func(ctx context.Context, key federation.Key) (federation.Result, error) {
		res, err := s.reconcileWith(withWriters(ctx, w), key, cached)
		if s.missedChange(key) {
			// Someone else's change arrived while the pass wrote: pass again at once, as its
			// watch event would have (an Add during the pass runs the key right after it).
			l.Enqueue(key)
		}
		return res, err
	}))
	cancel()
	wg.Wait()
	if err == nil {
		err = <-clusterErr
	}
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// ownerOfMember returns the federated object a member object belongs to, when this Syncer
// manages it. A member object has the federated object's name, and its namespace for a
// namespaced type; a member Namespace belongs to the FederatedNamespace in itself.
func (s *Syncer) ownerOfMember(obj *unstructured.Unstructured) (federation.Key, bool) {
	if plan.Manager(obj) != s.opts.Identity { // called for every member write: no label copy
		return federation.Key{}, false
	}
	key := federation.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	switch {
	case s.namespaceType():
		key.Namespace = obj.GetName()
	case !s.typ.FederatedNamespaced():
		key.Namespace = ""
	}
	if s.opts.Namespace != "" && key.Namespace != s.opts.Namespace {
		return federation.Key{}, false
	}
	return key, true
}

// ownerOfRevision returns the federated object whose history a ControllerRevision is (a
// change to the history, such as one deleted by hand, brings the object back), unless the
// change is sync's own (see changedByOthers).
func (s *Syncer) ownerOfRevision(obj *unstructured.Unstructured) []federation.Key {
	key, ok := s.revisionOwner(obj)
	if !ok || !s.changedByOthers(key, obj.GetResourceVersion()) {
		return nil
	}
	return []federation.Key{key}
}

// revisionOwner returns the federated object of the Syncer's type that owns a
// ControllerRevision.
func (s *Syncer) revisionOwner(obj *unstructured.Unstructured) (federation.Key, bool) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != s.typ.Federated.Kind || ref.APIVersion != s.typ.Federated.GroupVersion().String() {
			continue
		}
		ns := obj.GetNamespace()
		if !s.typ.FederatedNamespaced() {
			ns = ""
		}
		return federation.Key{Namespace: ns, Name: ref.Name}, true
	}
	return federation.Key{}, false
}

// Watches returns the host resources Run watches: the federated type (in Options.Namespace),
// the Clusters, and the revision history (apps/v1 ControllerRevisions, in Options.Namespace,
// or Options.HistoryNamespace for a cluster-scoped federated type). The member objects come
// from the cluster set's member caches.
func (s *Syncer) Watches() []federation.Watch { return loop.Watches(s.sources()) }

// sources are what Run watches, and how a change maps to keys. Its second loop, over the
// Clusters, watches nothing more.
func (s *Syncer) sources() []loop.Source {
	historyNS := s.opts.Namespace
	if !s.typ.FederatedNamespaced() {
		historyNS = s.opts.HistoryNamespace
	}
	return []loop.Source{
		{GVR: s.typ.FederatedGVR(), Namespace: s.opts.Namespace, Changed: func(_, obj *unstructured.Unstructured) bool {
			return s.changedByOthers(keyOf(obj), obj.GetResourceVersion())
		}},
		{GVR: federation.ClusterGVR, Broadcast: true, Changed: loop.ClusterChanged},
		{GVR: controllerRevisionGVR, Namespace: historyNS, LabelSelector: OwnerUIDLabel, IndexLabels: []string{OwnerUIDLabel}, Keys: s.ownerOfRevision, Deleted: s.historyDeleted},
	}
}
