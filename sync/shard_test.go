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

// A Syncer remembers the Clusters it holds by uid, not by name. With shards, the shard that
// holds a Cluster for its objects is not always the one that releases it (Clusters leaving
// the federation are sharded by name): a Cluster unjoined and joined again under the same
// name is a new Cluster, and every shard must hold it again before it creates an object
// there. Remembered by name, the shard that never saw the release created its object in
// the new Cluster without a finalizer, so the next unjoin left it behind.
func TestShardHoldsARejoinedClusterAgain(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	shards := make([]*fedsync.Syncer, 2)
	for i := range shards {
		s, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, Events: e.events,
			Shard: federation.Shard{Index: i, Count: 2}, ClusterRemoval: fedsync.RemovalDelete})
		require.NoError(t, err)
		shards[i] = s
	}
	owner := func(k federation.Key) *fedsync.Syncer {
		for i, s := range shards {
			if (federation.Shard{Index: i, Count: 2}).Owns(k) {
				return s
			}
		}
		t.Fatalf("no shard owns %s", k)
		return nil
	}
	objects := owner(key)
	// A cluster whose Cluster the other shard releases.
	cluster := ""
	for _, n := range clusterNames {
		if owner(federation.Key{Name: n}) != objects {
			cluster = n
		}
	}
	require.NotEmpty(t, cluster, "every cluster's Cluster is owned by the object's shard")
	fin := fedsync.ClusterFinalizer(e.typ, "")

	e.apply(t, e.typ.FederatedGVR(), frontend)
	_, err := objects.Reconcile(ctx, key)
	require.NoError(t, err)
	first, err := e.host.Peek(federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.Contains(t, first.GetFinalizers(), fin)

	// Unjoined: the object's pass deletes its copy there, the Cluster's shard releases it.
	e.leave(t, cluster)
	_, err = objects.Reconcile(ctx, key)
	require.NoError(t, err)
	_, err = owner(federation.Key{Name: cluster}).ReconcileCluster(ctx, federation.Key{Name: cluster})
	require.NoError(t, err)
	require.True(t, e.clusterGone(t, cluster))

	// Joined again under the same name: a new Cluster, which the object's shard must hold
	// before its copy goes there.
	require.NoError(t, e.fleet.Register(ctx, e.host))
	second, err := e.host.Peek(federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.NotEqual(t, first.GetUID(), second.GetUID())
	_, err = objects.Reconcile(ctx, key)
	require.NoError(t, err)
	require.NotNil(t, e.member(t, cluster), "the copy is back in %s", cluster)
	second, err = e.host.Peek(federation.ClusterGVR, "", cluster)
	require.NoError(t, err)
	require.Contains(t, second.GetFinalizers(), fin, "the rejoined Cluster %s is held before sync's object goes there", cluster)
}
