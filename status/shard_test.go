package status_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
	"github.com/fedkit/fedkit/status"
)

// shardWrites records which shard wrote which host object.
type shardWrites struct {
	mu     sync.Mutex
	byName map[string][]int
}

func (w *shardWrites) add(name string, shard int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byName[name] = append(w.byName[name], shard)
}

// shardHost is one shard's connection to the host, recording its writes.
type shardHost struct {
	*fake.Cluster
	w     *shardWrites
	shard int
}

func (h shardHost) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	h.w.add(u.GetName(), h.shard)
	return h.Cluster.UpdateStatus(ctx, gvr, u)
}

func (h shardHost) Update(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	h.w.add(u.GetName(), h.shard)
	return h.Cluster.Update(ctx, gvr, u)
}

func (h shardHost) Patch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	h.w.add(name, h.shard)
	return h.Cluster.Patch(ctx, gvr, ns, name, pt, data)
}

// TestMonitorShardsSplitClusters runs two monitors, one per shard, over six clusters: each
// Cluster is probed and written by the monitor whose shard owns its name, and by no other.
func TestMonitorShardsSplitClusters(t *testing.T) {
	const shards = 2
	host, fleet := newHost(t), fake.NewFleet()
	var names []string
	for i := range 6 {
		names = append(names, fmt.Sprintf("cluster-%d", i))
		fleet.Add(names[i], nil)
	}
	require.NoError(t, fleet.Register(ctx, host))
	w := &shardWrites{byName: map[string][]int{}}
	var stops []func()
	for i := range shards {
		m, err := status.NewClusterMonitor(shardHost{Cluster: host, w: w, shard: i}, fleet, status.MonitorOptions{
			Clock: clocktesting.NewFakeClock(t0), Shard: federation.Shard{Index: i, Count: shards},
		})
		require.NoError(t, err)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- m.Run(runCtx) }()
		stops = append(stops, func() { cancel(); require.NoError(t, <-done) })
	}
	require.Eventually(t, func() bool {
		for _, n := range names {
			u, err := host.Get(ctx, federation.ClusterGVR, "", n)
			require.NoError(t, err)
			if _, found, _ := unstructured.NestedString(u.Object, "status", "lastHeartbeatTime"); !found || !readyTrue(u) {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond, "every Cluster probed Ready by a monitor (Register marks them Ready already)")
	for _, stop := range stops {
		stop()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range names {
		owner := federation.ShardOf(federation.Key{Name: n}, shards)
		require.NotEmpty(t, w.byName[n], "Cluster %s written", n)
		for _, s := range w.byName[n] {
			require.Equal(t, owner, s, "Cluster %s, owned by shard %d, written by shard %d", n, owner, s)
		}
	}
}

func readyTrue(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func TestOptionsRejectAnInvalidShard(t *testing.T) {
	bad := federation.Shard{Index: 2, Count: 2}
	_, err := status.New(newHost(t), fake.NewFleet(), federation.DeploymentType, status.Options{Shard: bad})
	require.ErrorIs(t, err, status.ErrInvalidOptions)
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "status: New: status: invalid options: Options.Shard")
	_, err = status.NewClusterMonitor(newHost(t), fake.NewFleet(), status.MonitorOptions{Shard: bad})
	require.ErrorIs(t, err, status.ErrInvalidOptions)
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "status: NewClusterMonitor: status: invalid options: Options.Shard")
}

// TestMonitorRejectsAHeartbeatAsLongAsTheDisruptionWindow: a Ready cluster not heard from
// within the disruption window does not count when the fleet's disruption is judged
// (placement.FleetDisruption), so a heartbeat that slow would leave every Ready cluster out.
func TestMonitorRejectsAHeartbeatAsLongAsTheDisruptionWindow(t *testing.T) {
	for _, o := range []status.MonitorOptions{
		{HeartbeatInterval: placement.DefaultDisruptionWindow},
		{HeartbeatInterval: 2 * time.Minute, Disruption: placement.DisruptionOptions{Window: time.Minute}},
	} {
		if _, err := status.NewClusterMonitor(newHost(t), fake.NewFleet(), o); !errors.Is(err, status.ErrInvalidOptions) {
			t.Errorf("NewClusterMonitor(HeartbeatInterval %s, Window %s) = %v; want ErrInvalidOptions", o.HeartbeatInterval, o.Disruption.Window, err)
		}
	}
	if _, err := status.NewClusterMonitor(newHost(t), fake.NewFleet(), status.MonitorOptions{HeartbeatInterval: 4 * time.Minute}); err != nil {
		t.Errorf("NewClusterMonitor(HeartbeatInterval 4m) = %v", err)
	}
}
