package sync_test

import (
	"context"
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
