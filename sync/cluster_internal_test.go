package sync

import (
	gosync "sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// The first objects of a new type propagate in many passes at once, and each needs the
// Cluster held (sync's finalizer on it) before its first member write. One of them patches
// the Cluster; the others wait for it. Before, each pass read the Cluster and patched it
// locked on what it read: on real servers 16 workers made 91 Cluster reads and 43
// conflicting patches for 3 Clusters at the start of every run.
func TestHoldClusterOncePerCluster(t *testing.T) {
	f := fedtest.New(t, fedtest.Options{Members: []fedtest.Member{{Name: "aws"}, {Name: "gcp"}}})
	s, err := New(f.Host, f.Fleet, federation.ConfigMapType, Options{Clock: f.Clock, Registerer: f.Registry})
	require.NoError(t, err)
	f.Host.SetRecording(true)
	f.Host.ClearActions()
	uids := map[string]types.UID{}
	for _, c := range []string{"aws", "gcp"} {
		u, err := f.Host.Peek(federation.ClusterGVR, "", c)
		require.NoError(t, err)
		uids[c] = u.GetUID()
	}
	f.Host.ClearActions()
	var wg gosync.WaitGroup
	for range 16 {
		for _, c := range []string{"aws", "gcp"} {
			wg.Go(func() { require.NoError(t, s.holdCluster(t.Context(), c, uids[c])) })
		}
	}
	wg.Wait()
	calls := map[fake.Verb]int{}
	for _, a := range f.Host.Actions() {
		if a.Resource == federation.ClusterGVR {
			calls[a.Verb]++
		}
	}
	require.Equal(t, map[fake.Verb]int{fake.VerbGet: 2, fake.VerbPatch: 2}, calls, "host calls on Clusters")
	for _, c := range []string{"aws", "gcp"} {
		u, err := f.Host.Peek(federation.ClusterGVR, "", c)
		require.NoError(t, err)
		require.Contains(t, u.GetFinalizers(), s.clusterFinalizer(), c)
	}
}
