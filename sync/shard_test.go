package sync_test

import (
	"context"
	"errors"
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

// Run with a Shard is tested on real API servers in test/ha, with three processes splitting
// four shards; here only the option's validation.
func TestNewRejectsAnInvalidShard(t *testing.T) {
	_, err := fedsync.New(fake.NewHost("host"), fake.NewFleet(), federation.DeploymentType, fedsync.Options{Shard: federation.Shard{Index: 1}})
	require.ErrorIs(t, err, fedsync.ErrInvalidOptions)
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "sync: New: sync: invalid options: Options.Shard")
}

// TestNewRejectsInvalidOptions: every invalid option is an error wrapping ErrInvalidOptions
// that names the field.
func TestNewRejectsInvalidOptions(t *testing.T) {
	for _, tt := range []struct {
		opts fedsync.Options
		has  string
	}{
		{fedsync.Options{Conflict: "Steal"}, `Options.Conflict: unknown conflict policy "Steal"`},
		{fedsync.Options{DeletionPropagation: "Orphan"}, `Options.DeletionPropagation: unknown deletion propagation "Orphan"`},
		{fedsync.Options{ClusterRemoval: "Keep"}, `Options.ClusterRemoval: unknown cluster removal policy "Keep"`},
	} {
		t.Run(tt.has, func(t *testing.T) {
			_, err := fedsync.New(fake.NewHost("host"), fake.NewFleet(), federation.DeploymentType, tt.opts)
			require.ErrorIs(t, err, fedsync.ErrInvalidOptions)
			require.ErrorContains(t, err, tt.has)
		})
	}
}

// TestStatusRetryWhoseReadFails: when the status write conflicts and the re-read fails too
// (the host unreachable, or the process stopping: its context cancelled), Reconcile returns
// the error. It used to name the object from the failed read's nil result and panic, which
// killed a process that lost its leadership in the middle of a status retry (seen in
// test/ha).
func TestStatusRetryWhoseReadFails(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedGVR := e.typ.FederatedGVR()
	var conflicted atomic.Bool
	e.host.SetHooks(fake.Hooks{
		UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if gvr == fedGVR {
				conflicted.Store(true)
				return nil, apierrors.NewConflict(gvr.GroupResource(), obj.GetName(), errors.New("stale"))
			}
			return next.UpdateStatus(ctx, gvr, obj)
		},
		Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
			if gvr == fedGVR && conflicted.Load() {
				return nil, context.Canceled
			}
			return next.Get(ctx, gvr, ns, name)
		},
	})
	_, err := e.s.Reconcile(ctx, key)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "write status of FederatedDeployment production/app-frontend")
}
