package loop_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

func TestRunReconcilesChanges(t *testing.T) {
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "existing"))
	rec := &recorder{}
	stop := start(t, newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Name: "test"}), rec)
	defer stop()

	existing := federation.Key{Namespace: "default", Name: "existing"}
	require.Eventually(t, func() bool { return rec.count(existing) == 1 }, 5*time.Second, 5*time.Millisecond)
	create(t, host, configMaps, configMap("default", "new"))
	require.Eventually(t, func() bool { return rec.count(federation.Key{Namespace: "default", Name: "new"}) == 1 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, host.Delete(context.Background(), configMaps, "default", "existing", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return rec.count(existing) == 2 }, 5*time.Second, 5*time.Millisecond)
}

// TestRunWaitsOnItsClock checks that backoff and requeues wait on the injected clock for
// exactly their duration: the loop asks the clock for that timer, nothing happens before the
// clock moves, and the next reconcile happens at that time.
func TestRunWaitsOnItsClock(t *testing.T) {
	tests := []struct {
		name   string
		answer func(n int) (federation.Result, error)
		wait   time.Duration
	}{{
		name: "a failure backs off for BaseDelay",
		answer: func(n int) (federation.Result, error) {
			if n == 1 {
				return federation.Result{}, errors.New("host busy")
			}
			return federation.Result{}, nil
		},
		wait: 3 * time.Second,
	}, {
		name: "a conflict backs off too",
		answer: func(n int) (federation.Result, error) {
			if n == 1 {
				return federation.Result{}, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "cm", errors.New("stale"))
			}
			return federation.Result{}, nil
		},
		wait: 3 * time.Second,
	}, {
		name:   "RequeueAfter comes back after that long",
		answer: func(int) (federation.Result, error) { return federation.Result{RequeueAfter: time.Minute}, nil },
		wait:   time.Minute,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newTimerClock()
			host := fake.NewCluster("host")
			create(t, host, configMaps, configMap("default", "cm"))
			key := federation.Key{Namespace: "default", Name: "cm"}
			rec := &recorder{clock: clk, answer: func(_ federation.Key, n int) (federation.Result, error) { return tt.answer(n) }}
			stop := start(t, newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Clock: clk, BaseDelay: 3 * time.Second}), rec)
			defer stop()

			clk.waitTimer(t, tt.wait)
			require.Equal(t, 1, rec.count(key), "nothing happens before the clock moves")
			clk.Step(tt.wait)
			require.Eventually(t, func() bool { return rec.count(key) == 2 }, 5*time.Second, time.Millisecond)
			require.Equal(t, []time.Time{epoch, epoch.Add(tt.wait)}, rec.times(key)[:2])
		})
	}
}

// TestRunTerminalWaitsForAChange checks that a terminal error is not retried: the key comes
// back only when its object changes, and the loop never asked for a backoff timer.
func TestRunTerminalWaitsForAChange(t *testing.T) {
	clk := newTimerClock()
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "bad"))
	key := federation.Key{Namespace: "default", Name: "bad"}
	rec := &recorder{answer: func(federation.Key, int) (federation.Result, error) {
		return federation.Result{}, federation.Terminal(errors.New("bad spec"))
	}}
	logs := &logLines{}
	stop := start(t, newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Clock: clk, Logger: logs.logger()}), rec)
	defer stop()
	require.Eventually(t, func() bool { return rec.count(key) == 1 }, 5*time.Second, time.Millisecond)

	u, err := host.Get(context.Background(), configMaps, "default", "bad")
	require.NoError(t, err)
	u.SetLabels(map[string]string{"fixed": "maybe"})
	_, err = host.Update(context.Background(), configMaps, u)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rec.count(key) == 2 }, 5*time.Second, time.Millisecond)
	require.False(t, clk.asked(100*time.Millisecond), "a terminal error must not back off")
	require.Contains(t, logs.String(), "waiting for a change")
}

// blocker holds its first reconcile until ctx is done, and counts the reconciles that start
// with a cancelled context.
type blocker struct {
	started   chan struct{}
	once      sync.Once
	calls     atomic.Int32
	cancelled atomic.Int32
}

func (b *blocker) Reconcile(ctx context.Context, _ federation.Key) (federation.Result, error) {
	b.calls.Add(1)
	if ctx.Err() != nil {
		b.cancelled.Add(1)
	}
	b.once.Do(func() {
		close(b.started)
		<-ctx.Done()
	})
	return federation.Result{}, nil
}

// TestRunStopsTakingKeysWhenCancelled: with 300 keys queued and one worker, cancelling Run
// used to drain the queue with 299 reconciles of a cancelled context.
func TestRunStopsTakingKeysWhenCancelled(t *testing.T) {
	host := fake.NewCluster("host")
	var objs []*unstructured.Unstructured
	for i := range 300 {
		objs = append(objs, configMap("default", fmt.Sprintf("cm-%03d", i)))
	}
	require.NoError(t, host.Seed(objs...))
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Workers: 1})
	b := &blocker{started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, b) }()
	<-b.started
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, int32(0), b.cancelled.Load(), "reconciles started after cancellation")
	require.Equal(t, int32(1), b.calls.Load())
}

// TestRunCacheSyncTimeout: a source the host cannot list (its CRD is missing) used to stall
// the loop silently, and Run returned nil when cancelled. Now its list errors reach the
// logger, and Run fails after CacheSyncTimeout on the loop's clock, naming the resource.
func TestRunCacheSyncTimeout(t *testing.T) {
	clk := newTimerClock()
	host := failingList{Cluster: fake.NewCluster("host"), gvr: federation.ReplicaSchedulingPreferenceGVR}
	logs := &logLines{}
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}, {GVR: federation.ReplicaSchedulingPreferenceGVR, Namespace: "default"}},
		loop.Options{Name: "test", Clock: clk, Logger: logs.logger(), CacheSyncTimeout: time.Minute})
	rec := &recorder{}
	done := make(chan error, 1)
	go func() { done <- l.Run(context.Background(), rec) }()

	require.Eventually(t, func() bool {
		return regexpMatch(logs.String(), `Listing or watching failed.*could not find the requested resource.*"resource"="replicaschedulingpreferences.core.federation.k8s.io"`)
	}, 5*time.Second, time.Millisecond, "the list error is logged with the resource: %s", logs)
	// The ConfigMaps' cache has synced when Reader serves them without asking the host.
	lists := func() int {
		n := 0
		for _, a := range host.Actions() {
			if a.Verb == fake.VerbList && a.Resource == configMaps {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool {
		before := lists()
		_, err := l.Reader().List(context.Background(), configMaps, "", metav1.ListOptions{})
		return err == nil && lists() == before
	}, 10*time.Second, time.Millisecond, "the ConfigMaps' cache synced")
	clk.waitTimer(t, time.Minute)
	clk.Step(time.Minute)
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not give up after CacheSyncTimeout")
	}
	require.ErrorIs(t, err, loop.ErrCacheNotSynced)
	require.ErrorIs(t, err, errNotServed)
	require.ErrorContains(t, err, "replicaschedulingpreferences.core.federation.k8s.io in default")
	require.NotContains(t, err.Error(), "configmaps", "the cache that synced is not blamed")
	require.Zero(t, rec.count(federation.Key{}), "no worker started")
}

// TestRunCancelledBeforeSync returns nil: cancelling is not a failure.
func TestRunCancelledBeforeSync(t *testing.T) {
	host := failingList{Cluster: fake.NewCluster("host"), gvr: configMaps}
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, &recorder{}) }()
	cancel()
	require.NoError(t, <-done)
}

func TestRunOnceAtATime(t *testing.T) {
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "a"))
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{})
	rec := &recorder{}
	stop := start(t, l, rec)
	defer stop()
	require.Eventually(t, func() bool { return rec.count(federation.Key{Namespace: "default", Name: "a"}) == 1 }, 5*time.Second, time.Millisecond)
	require.ErrorContains(t, l.Run(context.Background(), &recorder{}), "already running")
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		host    federation.ClusterClient
		sources []loop.Source
		wantErr string
	}{
		{"no sources", fake.NewCluster("h"), nil, "no sources"},
		{"nil host", nil, []loop.Source{{GVR: configMaps}}, "nil host"},
		{"referrers of no source", fake.NewCluster("h"), []loop.Source{{GVR: configMaps, Referrers: &loop.Referrers{GVR: nodes}}}, "not a source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loop.New(tt.host, tt.sources, loop.Options{})
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
	require.Error(t, loop.Run(context.Background(), fake.NewCluster("h"), &recorder{}, nil, loop.Options{}))
}

// workersNow counts the goroutines running a Loop's worker.
func workersNow() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "internal/loop.(*Loop).work(")
}

// barrier is a Reconciler whose calls wait (bounded) until n of them run at once, and which
// records the most that ran at once.
type barrier struct {
	n          int
	mu         sync.Mutex
	now, most  int
	reached    chan struct{}
	reachedOne sync.Once
}

func (b *barrier) Reconcile(ctx context.Context, _ federation.Key) (federation.Result, error) {
	b.mu.Lock()
	b.now++
	b.most = max(b.most, b.now)
	if b.now >= b.n {
		b.reachedOne.Do(func() { close(b.reached) })
	}
	b.mu.Unlock()
	select {
	case <-b.reached:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	b.mu.Lock()
	b.now--
	b.mu.Unlock()
	return federation.Result{}, nil
}

// TestWorkersOnDemand: an idle Loop holds no worker (it held Options.Workers of them, each
// waiting on the queue: most of an idle control plane's goroutines); work starts workers up
// to Options.Workers, never more, and they exit once the queue is idle.
func TestWorkersOnDemand(t *testing.T) {
	const workers = 8
	host := fake.NewCluster("host")
	l := newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Workers: workers})
	b := &barrier{n: workers, reached: make(chan struct{})}
	stop := start(t, l, b)
	defer stop()
	idle := func(what string) {
		t.Helper()
		n := -1
		for deadline := time.Now().Add(10 * time.Second); n != 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			n = workersNow()
		}
		require.Zero(t, n, "%s: workers running", what)
	}

	for i := range 3 * workers {
		create(t, host, configMaps, configMap("default", fmt.Sprintf("cm-%02d", i)))
	}
	select {
	case <-b.reached:
	case <-time.After(10 * time.Second):
		t.Fatalf("the work never ran on %d workers at once", workers)
	}
	idle("once the queue is idle")
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Equal(t, workers, b.most, "the most reconciles at once")
}
