package loop_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// openWatches is a host that counts the watches open on it, by resource.
type openWatches struct {
	*fake.Cluster
	mu   sync.Mutex
	open map[string]int
}

func (o *openWatches) Watch(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := o.Cluster.Watch(ctx, gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.open[gvr.Resource]++
	o.mu.Unlock()
	return &stopHook{Interface: w, stop: func() {
		o.mu.Lock()
		o.open[gvr.Resource]--
		o.mu.Unlock()
	}}, nil
}

func (o *openWatches) String() string { return fmt.Sprint(o.counts()) }

func (o *openWatches) counts() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for k, v := range o.open {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

type stopHook struct {
	watch.Interface
	once sync.Once
	stop func()
}

func (s *stopHook) Stop() {
	s.Interface.Stop()
	s.once.Do(s.stop)
}

// trim is a Transform that drops a Secret's data.
func trim(u *unstructured.Unstructured) { delete(u.Object, "data") }

// Two loops on one Cache share one informer per resource, selector and transform: a trimmed
// Secret informer stays apart from a whole one, and neither serves the other's reads. A loop
// that returns removes its handlers and leaves the informer to the other; the last one to
// leave stops it. Every informer drops managedFields.
func TestCacheSharesInformers(t *testing.T) {
	host := &openWatches{Cluster: fake.NewHost("host"), open: map[string]int{}}
	cm := configMap("default", "a")
	cm.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}})
	create(t, host, configMaps, cm)
	secret := object("Secret", "default", "s", nil)
	secret.Object["data"] = map[string]any{"token": "c2VjcmV0"}
	create(t, host, secrets, secret)

	c := runCache(t, host)

	trimmed := newLoop(t, host, []loop.Source{
		{GVR: configMaps},
		{GVR: secrets, Transform: trim, TransformName: "trim"},
	}, loop.Options{Name: "trimmed", Cache: c})
	whole := newLoop(t, host, []loop.Source{
		{GVR: configMaps},
		{GVR: secrets},
	}, loop.Options{Name: "whole", Cache: c})
	var ra, rb recorder
	stopA := start(t, trimmed, &ra)
	stopB := start(t, whole, &rb)
	key := federation.Key{Namespace: "default", Name: "a"}
	require.Eventually(t, func() bool { return ra.count(key) > 0 && rb.count(key) > 0 }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool {
		return cmp.Equal(map[string]int{"configmaps": 1, "secrets": 2}, host.counts())
	}, 10*time.Second, 5*time.Millisecond, "one ConfigMap watch, a trimmed and a whole Secret watch")

	got, err := whole.Reader().Get(context.Background(), configMaps, "default", "a")
	require.NoError(t, err)
	require.Nil(t, got.GetManagedFields(), "managedFields are not cached")
	s, err := whole.Reader().Get(context.Background(), secrets, "default", "s")
	require.NoError(t, err)
	require.NotNil(t, s.Object["data"], "the whole Secret informer keeps the data")
	s, ok, err := trimmed.GetTrimmed(secrets, "default", "s")
	require.NoError(t, err)
	require.True(t, ok)
	require.Nil(t, s.Object["data"], "the trimmed Secret informer drops the data")

	// The trimmed loop returns: the ConfigMap informer runs on for the whole one.
	stopA()
	require.Eventually(t, func() bool {
		return cmp.Equal(map[string]int{"configmaps": 1, "secrets": 1}, host.counts())
	}, 10*time.Second, 5*time.Millisecond, "the trimmed Secret informer stopped with its last loop: %v", host)
	create(t, host, configMaps, configMap("default", "b"))
	keyB := federation.Key{Namespace: "default", Name: "b"}
	require.Eventually(t, func() bool { return rb.count(keyB) > 0 }, 10*time.Second, 5*time.Millisecond)
	require.Zero(t, ra.count(keyB), "a loop that returned gets no more events")

	stopB()
	require.Eventually(t, func() bool { return len(host.counts()) == 0 }, 10*time.Second, 5*time.Millisecond,
		"informers no loop uses are stopped")
}

// Synced says whether the informers loops use for a resource have listed: not before a loop
// asks for the resource, not while one of its informers cannot list, not once the last loop
// using it has returned, and not while the Cache does not run.
func TestCacheSynced(t *testing.T) {
	host := failingList{Cluster: fake.NewCluster("host"), gvr: secrets}
	create(t, host, configMaps, configMap("default", "a"))
	idle, err := loop.NewCache(host, loop.CacheOptions{})
	require.NoError(t, err)
	require.False(t, idle.Synced(configMaps), "a Cache that does not run")

	c := runCache(t, host)
	require.False(t, c.Synced(configMaps), "no loop asked for ConfigMaps yet")
	all := newLoop(t, host, []loop.Source{{GVR: configMaps}, {GVR: secrets}}, loop.Options{Name: "all", Cache: c})
	labelled := newLoop(t, host, []loop.Source{{GVR: configMaps, Namespace: "default", LabelSelector: "app"}}, loop.Options{Name: "labelled", Cache: c})
	stopAll := start(t, all, &recorder{})
	require.Eventually(t, func() bool { return c.Synced(configMaps) }, 10*time.Second, time.Millisecond, "the ConfigMap informer listed")
	require.False(t, c.Synced(secrets), "the Secrets cannot be listed")
	require.False(t, c.Synced(services), "no loop watches Services")
	stopLabelled := start(t, labelled, &recorder{})
	require.Eventually(t, func() bool { return c.Synced(configMaps) }, 10*time.Second, time.Millisecond, "both ConfigMap informers listed")
	stopAll()
	stopLabelled()
	require.False(t, c.Synced(configMaps), "no loop uses a ConfigMap informer any more")
}

// A loop given a Cache nobody runs says so when its caches do not sync.
func TestCacheNotRunning(t *testing.T) {
	clk := newTimerClock()
	c, err := loop.NewCache(fake.NewHost("host"), loop.CacheOptions{})
	require.NoError(t, err)
	l := newLoop(t, fake.NewHost("host"), []loop.Source{{GVR: configMaps}}, loop.Options{Clock: clk, Cache: c, CacheSyncTimeout: time.Minute})
	done := make(chan error, 1)
	go func() { done <- l.Run(context.Background(), &recorder{}) }()
	clk.waitTimer(t, time.Minute)
	clk.Step(time.Minute)
	err = <-done
	require.ErrorIs(t, err, loop.ErrCacheNotSynced)
	require.ErrorContains(t, err, "the shared cache is not running")
}

// Clusters are decoded once per uid and resourceVersion for every loop of a Cache.
func TestCacheDecodesClustersOnce(t *testing.T) {
	c, err := loop.NewCache(fake.NewHost("host"), loop.CacheOptions{})
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "eu", "uid": "u1", "resourceVersion": "1"},
		"spec":     map[string]any{"apiEndpoint": "https://eu.example.com"},
	}}
	a, err := c.DecodeCluster(u)
	require.NoError(t, err)
	b, err := c.DecodeCluster(u.DeepCopy())
	require.NoError(t, err)
	require.Same(t, a, b, "the same uid and resourceVersion decode once")
	u.SetResourceVersion("2")
	d, err := c.DecodeCluster(u)
	require.NoError(t, err)
	require.NotSame(t, a, d, "a new resourceVersion decodes again")
	require.Equal(t, "2", d.ResourceVersion)
}

// A loop that joins an informer another loop has listed is handed its store in Run's own
// goroutine; a source whose Keys reads through the loop's Reader (the propagation loop
// lists the native objects of a policy's namespace) must not deadlock on the Loop's lock
// (the controlplane tests hung there once the handlers shared one client-go listener).
func TestLateLoopWhoseKeysReadThroughItsReader(t *testing.T) {
	host := fake.NewHost("host")
	create(t, host, configMaps, configMap("default", "a"))
	create(t, host, secrets, object("Secret", "default", "s", nil))
	c := runCache(t, host)
	first := newLoop(t, host, []loop.Source{{GVR: configMaps}, {GVR: secrets}}, loop.Options{Name: "first", Cache: c})
	var rf recorder
	defer start(t, first, &rf)()
	require.Eventually(t, func() bool { return rf.count(federation.Key{Namespace: "default", Name: "a"}) > 0 },
		10*time.Second, 5*time.Millisecond)

	var late *loop.Loop
	secretsOf := func(u *unstructured.Unstructured) []federation.Key {
		list, err := late.Reader().List(context.Background(), secrets, u.GetNamespace(), metav1.ListOptions{})
		if err != nil {
			return nil
		}
		var keys []federation.Key
		for _, s := range list.Items {
			keys = append(keys, federation.Key{Namespace: s.GetNamespace(), Name: s.GetName()})
		}
		return keys
	}
	late = newLoop(t, host, []loop.Source{{GVR: secrets}, {GVR: configMaps, Keys: secretsOf}}, loop.Options{Name: "late", Cache: c})
	var rl recorder
	stop := start(t, late, &rl)
	require.Eventually(t, func() bool { return rl.count(federation.Key{Namespace: "default", Name: "s"}) > 0 },
		10*time.Second, 5*time.Millisecond, "the late loop never reconciled: its Run is stuck starting")
	stop()
}

// runCache runs a Cache of host until the test ends.
func runCache(t *testing.T, host federation.ClusterClient) *loop.Cache {
	t.Helper()
	c, err := loop.NewCache(host, loop.CacheOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return c
}
