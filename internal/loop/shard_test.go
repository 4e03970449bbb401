package loop_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// TestShardsReconcileEveryKeyOnce runs N loops on one host, one per shard, and checks that
// together they reconcile every key exactly once, each by the shard that owns it: when the
// loops start (events of the initial list), when a broadcast source changes (a Cluster change
// fans out to every object), and when every key is enqueued into every loop (member caches).
func TestShardsReconcileEveryKeyOnce(t *testing.T) {
	const keys, shards = 600, 3
	host := fake.NewCluster("host")
	var all []federation.Key
	for i := range keys {
		ns := fmt.Sprintf("ns-%d", i%3)
		if i < 3 {
			create(t, host, namespacesGVR, object("Namespace", "", ns, nil))
		}
		create(t, host, configMaps, configMap(ns, fmt.Sprintf("cm-%d", i)))
		all = append(all, federation.Key{Namespace: ns, Name: fmt.Sprintf("cm-%d", i)})
	}
	recs := make([]*recorder, shards)
	loops := make([]*loop.Loop, shards)
	var stops []func()
	for i := range shards {
		recs[i] = &recorder{}
		loops[i] = newLoop(t, host, []loop.Source{
			{GVR: configMaps},
			{GVR: nodes, Broadcast: true},
		}, loop.Options{Name: fmt.Sprintf("shard-%d", i), Shard: federation.Shard{Index: i, Count: shards}})
		stops = append(stops, start(t, loops[i], recs[i]))
	}
	total := func() int {
		n := 0
		for _, r := range recs {
			for _, k := range all {
				n += r.count(k)
			}
		}
		return n
	}
	// check stops the loops (Run joins its workers, so nothing is reconciled afterwards) and
	// checks that every key was reconciled want times, all by its owner.
	check := func(want int) {
		t.Helper()
		for _, k := range all {
			owner := federation.ShardOf(k, shards)
			for i, r := range recs {
				if i == owner {
					require.Equal(t, want, r.count(k), "key %s, owned by shard %d", k, owner)
				} else {
					require.Zero(t, r.count(k), "key %s, owned by shard %d, reconciled by shard %d", k, owner, i)
				}
			}
		}
	}

	require.Eventually(t, func() bool { return total() >= keys }, 10*time.Second, 5*time.Millisecond)
	create(t, host, nodes, object("Node", "", "node-1", nil))
	require.Eventually(t, func() bool { return total() >= 2*keys }, 10*time.Second, 5*time.Millisecond)
	for _, l := range loops {
		l.Enqueue(all...)
	}
	require.Eventually(t, func() bool { return total() >= 3*keys }, 10*time.Second, 5*time.Millisecond)
	for _, stop := range stops {
		stop()
	}
	check(3)
	for i, r := range recs {
		owned := 0
		for _, k := range all {
			if r.count(k) > 0 {
				owned++
			}
		}
		t.Logf("shard %d/%d reconciled %d of %d keys", i, shards, owned, keys)
	}
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func TestNewRejectsAnInvalidShard(t *testing.T) {
	_, err := loop.New(fake.NewCluster("host"), []loop.Source{{GVR: configMaps}}, loop.Options{Name: "test", Shard: federation.Shard{Index: 3, Count: 3}})
	require.ErrorIs(t, err, federation.ErrInvalidShard)
	require.ErrorContains(t, err, "loop test: Shard")
}
