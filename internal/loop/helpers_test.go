package loop_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// TestMain fails the package when a test leaves goroutines behind: Run must join everything
// it starts.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	nodes      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	services   = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	volumes    = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	epoch      = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
)

// recorder counts reconciles per key, records the clock's time of each, and answers with a
// scripted result.
type recorder struct {
	clock  clock.PassiveClock
	mu     sync.Mutex
	calls  map[federation.Key][]time.Time
	answer func(key federation.Key, n int) (federation.Result, error)
}

func (r *recorder) Reconcile(_ context.Context, key federation.Key) (federation.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[federation.Key][]time.Time{}
	}
	var at time.Time
	if r.clock != nil {
		at = r.clock.Now()
	}
	r.calls[key] = append(r.calls[key], at)
	if r.answer == nil {
		return federation.Result{}, nil
	}
	return r.answer(key, len(r.calls[key]))
}

func (r *recorder) count(key federation.Key) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls[key])
}

// times returns the clock's time at each reconcile of key.
func (r *recorder) times(key federation.Key) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls[key])
}

// timerClock is a fake clock that records the duration of every timer asked of it, so a test
// can wait until the loop waits for exactly the duration it should.
type timerClock struct {
	*clocktesting.FakeClock
	mu     sync.Mutex
	timers []time.Duration
}

func newTimerClock() *timerClock { return &timerClock{FakeClock: clocktesting.NewFakeClock(epoch)} }

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.timers = append(c.timers, d)
	c.mu.Unlock()
	return c.FakeClock.NewTimer(d)
}

func (c *timerClock) asked(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.timers, d)
}

// waitTimer waits until the loop has asked for a timer of d.
func (c *timerClock) waitTimer(t *testing.T, d time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return c.asked(d) }, 5*time.Second, time.Millisecond, "no timer of %s", d)
}

func object(kind, ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func configMap(ns, name string) *unstructured.Unstructured { return object("ConfigMap", ns, name, nil) }

func create(t testing.TB, c federation.ClusterClient, gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	t.Helper()
	_, err := c.Create(context.Background(), gvr, u)
	require.NoError(t, err)
}

// start runs l in the background and returns a stop function that checks Run's result.
func start(t *testing.T, l *loop.Loop, r loop.Reconciler) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, r) }()
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

func newLoop(t *testing.T, host federation.ClusterClient, sources []loop.Source, opts loop.Options) *loop.Loop {
	t.Helper()
	l, err := loop.New(host, sources, opts)
	require.NoError(t, err)
	return l
}

// failingList is a host on which one resource cannot be listed, as on a host that lacks its
// CRD.
type failingList struct {
	*fake.Cluster
	gvr schema.GroupVersionResource
}

var errNotServed = errors.New("the server could not find the requested resource")

func (f failingList) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if gvr == f.gvr {
		return nil, errNotServed
	}
	return f.Cluster.List(ctx, gvr, ns, o)
}

// logLines collects log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
