package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// addOwnQueueSync drives the Syncer's Reconcile from a controller-runtime controller (the
// manager's cache and work queue) instead of Syncer.Run, with the three triggers Run has:
//
//   - the federated objects of the type (the manager's cache);
//   - the Clusters: a change that matters to sync (fedsync.ClusterChanged: readiness, labels,
//     spec; not heartbeats) requeues every federated object of the type;
//   - the member objects: fedsync's WatchMembers turns a change in a member cluster (drift, a
//     deletion by hand) into the federated object's key, so it is corrected at once.
func addOwnQueueSync(mgr manager.Manager, syncer *fedsync.Syncer, typ federation.TypeConfig) error {
	c, err := controller.New("fedkit-sync-"+typ.Federated.Kind, mgr, controller.Options{
		Reconciler: reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			res, err := syncer.Reconcile(ctx, federation.Key{Namespace: req.Namespace, Name: req.Name})
			if federation.IsTerminal(err) {
				return reconcile.Result{}, reconcile.TerminalError(err)
			}
			return reconcile.Result{RequeueAfter: res.RequeueAfter}, err
		}),
	})
	if err != nil {
		return err
	}
	fed := &unstructured.Unstructured{}
	fed.SetGroupVersionKind(typ.Federated)
	if err := c.Watch(source.Kind[*unstructured.Unstructured](mgr.GetCache(), fed, &handler.TypedEnqueueRequestForObject[*unstructured.Unstructured]{})); err != nil {
		return err
	}

	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(federation.CoreGroupVersion.WithKind("Cluster"))
	everyObject := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *unstructured.Unstructured) []reconcile.Request {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(typ.Federated.GroupVersion().WithKind(typ.Federated.Kind + "List"))
		if err := mgr.GetCache().List(ctx, list); err != nil {
			mgr.GetLogger().Error(err, "listing the federated objects for a Cluster change", "kind", typ.Federated.Kind)
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	})
	clusterChanged := predicate.TypedFuncs[*unstructured.Unstructured]{
		UpdateFunc: func(e event.TypedUpdateEvent[*unstructured.Unstructured]) bool {
			return fedsync.ClusterChanged(e.ObjectOld, e.ObjectNew)
		},
	}
	if err := c.Watch(source.Kind[*unstructured.Unstructured](mgr.GetCache(), cluster, everyObject, clusterChanged)); err != nil {
		return err
	}

	return c.Watch(source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		remove, ok := syncer.WatchMembers(func(k federation.Key) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: k.Namespace, Name: k.Name}})
		})
		if !ok {
			return fmt.Errorf("the cluster set has no member caches: drift would wait for a resync")
		}
		go func() {
			<-ctx.Done()
			remove()
		}()
		return nil
	}))
}
