package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// shardHost is one shard's connection to the host; it records which shard wrote which
// object's status.
type shardHost struct {
	*fake.Cluster
	mu     *sync.Mutex
	writes map[federation.Key][]int
	shard  int
}

func (h shardHost) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	h.mu.Lock()
	k := federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}
	h.writes[k] = append(h.writes[k], h.shard)
	h.mu.Unlock()
	return h.Cluster.UpdateStatus(ctx, gvr, u)
}

// TestRunShardsSplitObjects runs three Schedulers, one per shard, on one host: every object
// is scheduled, by the Scheduler whose shard owns it and by no other.
func TestRunShardsSplitObjects(t *testing.T) {
	const objects, shards = 60, 3
	f := newRunFixture(t, 3, objects, false)
	var mu sync.Mutex
	writes := map[federation.Key][]int{}
	var stops []func()
	for i := range shards {
		s, err := scheduler.New(shardHost{Cluster: f.host, mu: &mu, writes: writes, shard: i}, federation.DeploymentType, scheduler.Options{
			Clock: clocktesting.NewFakeClock(now), Shard: federation.Shard{Index: i, Count: shards},
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		stops = append(stops, func() { cancel(); require.NoError(t, <-done) })
	}
	scheduled := func() int {
		list, err := f.host.List(context.Background(), federation.DeploymentType.FederatedGVR(), "default", metav1.ListOptions{})
		require.NoError(t, err)
		n := 0
		for _, u := range list.Items {
			if _, found, _ := unstructured.NestedSlice(u.Object, "status", "schedule", "clusters"); found {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return scheduled() == objects }, 30*time.Second, 5*time.Millisecond)
	for _, stop := range stops {
		stop()
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, writes, objects)
	for k, by := range writes {
		owner := federation.ShardOf(k, shards)
		for _, s := range by {
			require.Equal(t, owner, s, "%s, owned by shard %d, written by shard %d", k, owner, s)
		}
	}
}

func TestNewRejectsAnInvalidShard(t *testing.T) {
	_, err := scheduler.New(fake.NewHost("host"), federation.DeploymentType, scheduler.Options{Shard: federation.Shard{Index: -1, Count: 2}})
	require.ErrorIs(t, err, scheduler.ErrInvalidOptions)
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "scheduler: New: scheduler: invalid options: Options.Shard")
}
