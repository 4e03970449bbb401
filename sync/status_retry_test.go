package sync_test

import (
	"context"
	"errors"
	gosync "sync"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

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
