package loop_test

import (
	"context"
	"errors"
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
	"github.com/fedkit/fedkit/internal/loop"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// recorder counts reconciles per key and answers with a scripted result.
type recorder struct {
	mu     sync.Mutex
	calls  map[federation.Key]int
	answer func(key federation.Key, n int) (federation.Result, error)
}

func (r *recorder) Reconcile(_ context.Context, key federation.Key) (federation.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[federation.Key]int{}
	}
	r.calls[key]++
	if r.answer == nil {
		return federation.Result{}, nil
	}
	return r.answer(key, r.calls[key])
}

func (r *recorder) count(key federation.Key) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[key]
}

func configMap(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// start runs the loop in the background and returns a stop function that checks Run's result.
func start(t *testing.T, host *fake.Cluster, r loop.Reconciler, sources []loop.Source, opts loop.Options) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx, host, r, sources, opts) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its context was cancelled")
		}
	}
}

func TestRunReconcilesChanges(t *testing.T) {
	host := fake.NewCluster("host")
	_, err := host.Create(context.Background(), configMaps, configMap("default", "existing"))
	require.NoError(t, err)
	rec := &recorder{}
	stop := start(t, host, rec, []loop.Source{{GVR: configMaps}}, loop.Options{Name: "test"})
	defer stop()

	existing := federation.Key{Namespace: "default", Name: "existing"}
	require.Eventually(t, func() bool { return rec.count(existing) == 1 }, 5*time.Second, 5*time.Millisecond)
	_, err = host.Create(context.Background(), configMaps, configMap("default", "new"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rec.count(federation.Key{Namespace: "default", Name: "new"}) == 1 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, host.Delete(context.Background(), configMaps, "default", "existing", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return rec.count(existing) == 2 }, 5*time.Second, 5*time.Millisecond)
}

func TestRunRetriesAndRequeues(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	host := fake.NewCluster("host")
	for _, name := range []string{"transient", "terminal", "periodic"} {
		_, err := host.Create(context.Background(), configMaps, configMap("default", name))
		require.NoError(t, err)
	}
	rec := &recorder{answer: func(key federation.Key, n int) (federation.Result, error) {
		switch key.Name {
		case "transient":
			if n == 1 {
				return federation.Result{}, errors.New("host busy")
			}
		case "terminal":
			return federation.Result{}, federation.Terminal(errors.New("bad spec"))
		case "periodic":
			return federation.Result{RequeueAfter: time.Minute}, nil
		}
		return federation.Result{}, nil
	}}
	stop := start(t, host, rec, []loop.Source{{GVR: configMaps}}, loop.Options{Clock: clk, BaseDelay: time.Second})
	defer stop()

	key := func(name string) federation.Key { return federation.Key{Namespace: "default", Name: name} }
	require.Eventually(t, func() bool {
		return rec.count(key("transient")) == 1 && rec.count(key("terminal")) == 1 && rec.count(key("periodic")) == 1
	}, 5*time.Second, 5*time.Millisecond)

	// Backoff and requeue wait on the injected clock: nothing happens until it moves.
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, 1, rec.count(key("transient")))
	require.Eventually(t, func() bool {
		clk.Step(time.Second)
		return rec.count(key("transient")) == 2
	}, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		clk.Step(10 * time.Second)
		return rec.count(key("periodic")) >= 2
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, rec.count(key("terminal")), "a terminal error must not be retried")
	require.Equal(t, 2, rec.count(key("transient")), "a success after a retry must not requeue")
}

func TestRunBroadcastAndKeys(t *testing.T) {
	host := fake.NewCluster("host")
	for _, name := range []string{"a", "b"} {
		_, err := host.Create(context.Background(), configMaps, configMap("default", name))
		require.NoError(t, err)
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	rec := &recorder{}
	stop := start(t, host, rec, []loop.Source{
		{GVR: configMaps},
		{GVR: nodes, Broadcast: true},
		{GVR: secrets, Keys: func(u *unstructured.Unstructured) []federation.Key {
			return []federation.Key{{Namespace: u.GetNamespace(), Name: u.GetLabels()["for"]}}
		}},
	}, loop.Options{})
	defer stop()
	a, b := federation.Key{Namespace: "default", Name: "a"}, federation.Key{Namespace: "default", Name: "b"}
	require.Eventually(t, func() bool { return rec.count(a) == 1 && rec.count(b) == 1 }, 5*time.Second, 5*time.Millisecond)

	node := &unstructured.Unstructured{}
	node.SetAPIVersion("v1")
	node.SetKind("Node")
	node.SetName("n1")
	_, err := host.Create(context.Background(), nodes, node)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rec.count(a) == 2 && rec.count(b) == 2 }, 5*time.Second, 5*time.Millisecond)

	secret := configMap("default", "s")
	secret.SetKind("Secret")
	secret.SetLabels(map[string]string{"for": "b"})
	_, err = host.Create(context.Background(), secrets, secret)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rec.count(b) == 3 }, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, 2, rec.count(a))
}

func TestRunNeedsSources(t *testing.T) {
	require.Error(t, loop.Run(context.Background(), fake.NewCluster("h"), &recorder{}, nil, loop.Options{}))
}
