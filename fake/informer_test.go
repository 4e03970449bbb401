package fake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestClientGoInformer runs a real client-go informer against a fake cluster: its reflector
// lists, watches from the list's resourceVersion and relists on a broken watch, so this checks
// that the fake's list and watch semantics are the ones client-go relies on.
func TestClientGoInformer(t *testing.T) {
	c := newCluster(t, "c")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mustCreate(t, c, configMapGVR, configMap("prod", "before", nil))

	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return c.List(ctx, configMapGVR, "", opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, configMapGVR, "", opts)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	go inf.RunWithContext(ctx)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))

	keys := func() []string { return inf.GetStore().ListKeys() }
	require.ElementsMatch(t, []string{"prod/before"}, keys())

	mustCreate(t, c, configMapGVR, configMap("prod", "after", nil))
	require.NoError(t, c.DriftDelete(configMapGVR, "prod", "before"))
	require.Eventually(t, func() bool {
		k := keys()
		return len(k) == 1 && k[0] == "prod/after"
	}, 5*time.Second, 5*time.Millisecond, "informer follows the watch")

	// A partition breaks the watch; after healing, the reflector relists and catches up with
	// what happened meanwhile.
	c.Partition()
	require.NoError(t, c.Seed(configMap("prod", "during", nil)))
	c.Heal()
	require.Eventually(t, func() bool { return len(keys()) == 2 }, 10*time.Second, 10*time.Millisecond,
		"informer recovers after a partition")
}
