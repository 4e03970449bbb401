package loop

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/fedkit/fedkit/fake"
)

// seen records what a handler of a fanout was handed: "add a (initial)", "update a", "delete a".
type seen struct {
	mu  sync.Mutex
	got []string
}

func (s *seen) record(what string, obj any) {
	u, _ := objectOf(obj)
	s.mu.Lock()
	s.got = append(s.got, what+" "+u.GetName())
	s.mu.Unlock()
}

func (s *seen) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			what := "add"
			if initial {
				what = "add (initial)"
			}
			s.record(what, obj)
		},
		UpdateFunc: func(_, obj any) { s.record("update", obj) },
		DeleteFunc: func(obj any) { s.record("delete", obj) },
	}
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func (s *seen) waitFor(t *testing.T, want []string) {
	t.Helper()
	require.Eventually(t, func() bool { return cmp.Equal(want, s.list()) }, 10*time.Second, time.Millisecond,
		"handed out (-want +got):\n%s", func() string { return cmp.Diff(want, s.list()) })
}

// add creates the ConfigMap default/name in c.
func add(t *testing.T, c *fake.Cluster, gvr schema.GroupVersionResource, name string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetNamespace("default")
	u.SetName(name)
	_, err := c.Create(context.Background(), gvr, u)
	require.NoError(t, err)
}

// A handler added to an informer's fanout is handed the store as the initial list, then
// every change, and nothing once removed; many handlers run on the fanout's one client-go
// listener, not a listener (two goroutines) each.
func TestFanout(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	host := fake.NewCluster("host")
	ctx := context.Background()
	add(t, host, gvr, "a")
	inf := NewInformer(host, gvr, "", "")
	f, err := newFanout(inf)
	require.NoError(t, err)
	early := &seen{}
	earlyReg, err := f.add(early.handler())
	require.NoError(t, err)
	require.False(t, earlyReg.HasSynced(), "synced before the informer ran")

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { inf.RunWithContext(runCtx); close(done) }()
	defer func() { stop(); <-done }()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), earlyReg.HasSynced))
	early.waitFor(t, []string{"add (initial) a"})

	before := runtime.NumGoroutine()
	late := make([]*seen, 20)
	regs := make([]*fanoutHandler, len(late))
	for i := range late {
		late[i] = &seen{}
		regs[i], err = f.add(late[i].handler())
		require.NoError(t, err)
		require.True(t, regs[i].HasSynced(), "a handler added to a synced informer has its store at once")
		require.Equal(t, []string{"add (initial) a"}, late[i].list())
	}
	if n := runtime.NumGoroutine() - before; n > 5 {
		t.Errorf("20 handlers started %d goroutines; want none (client-go starts two per handler)", n)
	}

	add(t, host, gvr, "b")
	u, err := host.Get(ctx, gvr, "default", "a")
	require.NoError(t, err)
	u.SetLabels(map[string]string{"x": "y"})
	_, err = host.Update(ctx, gvr, u)
	require.NoError(t, err)
	for _, s := range late {
		s.waitFor(t, []string{"add (initial) a", "add b", "update a"})
	}
	f.remove(regs[0])
	require.NoError(t, host.Delete(ctx, gvr, "default", "b", metav1.DeleteOptions{}))
	late[1].waitFor(t, []string{"add (initial) a", "add b", "update a", "delete b"})
	early.waitFor(t, []string{"add (initial) a", "add b", "update a", "delete b"})
	require.Equal(t, []string{"add (initial) a", "add b", "update a"}, late[0].list(), "a removed handler is handed nothing")

	stop()
	<-done
	_, err = f.add(cache.ResourceEventHandlerFuncs{})
	require.ErrorIs(t, err, errInformerStopped)
}
