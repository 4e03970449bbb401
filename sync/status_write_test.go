package sync_test

import (
	"context"
	"errors"
	gosync "sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// A status write that conflicts, then a re-read of the object that fails (the pass was
// cancelled, the host went away), is an error naming the object, not a nil dereference that
// kills the worker (seen when a control plane stopped in the middle of a pass).
func TestStatusRereadFailureIsAnError(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedGR := schema.GroupResource{Group: e.typ.Federated.Group, Resource: e.typ.FederatedResource}
	var conflicted atomic.Bool
	e.host.SetHooks(fake.Hooks{
		UpdateStatus: func(context.Context, federation.ClusterClient, schema.GroupVersionResource, *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			conflicted.Store(true)
			return nil, apierrors.NewConflict(fedGR, key.Name, nil)
		},
		Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
			if conflicted.Load() && gvr == e.typ.FederatedGVR() {
				return nil, context.Canceled
			}
			return next.Get(ctx, gvr, ns, name)
		},
	})
	_, err := e.s.Reconcile(ctx, key)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "write status of FederatedDeployment production/app-frontend")
}

// A status write that conflicts is redone on a fresh read; when that read fails (the host
// is unavailable a moment), the pass returns the error instead of crashing the process
// (found by the chaos soak, test/soak, in Run mode: a nil pointer in a worker goroutine).
func TestStatusWriteConflictThenFailedReadIsAnError(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	var mu gosync.Mutex
	conflicted := false
	e.host.SetHooks(fake.Hooks{
		UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			mu.Lock()
			defer mu.Unlock()
			conflicted = true
			return nil, apierrors.NewConflict(gvr.GroupResource(), obj.GetName(), errors.New("changed meanwhile"))
		},
		Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
			mu.Lock()
			defer mu.Unlock()
			if conflicted {
				return nil, apierrors.NewServiceUnavailable("host busy")
			}
			return next.Get(ctx, gvr, ns, name)
		},
	})
	_, err := e.s.Reconcile(ctx, key)
	require.Error(t, err)
	require.True(t, apierrors.IsServiceUnavailable(err), "%v", err)
	require.ErrorContains(t, err, key.String())
}
