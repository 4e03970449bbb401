package lease_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/lease"
)

// TestMain fails the package when a test leaves goroutines behind: Elect and Shards must
// join everything they start.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fast are durations short enough for tests on the real clock: a Lease is taken over about
// a second after its holder stopped renewing.
func fast(name, identity string) lease.Options {
	return lease.Options{
		Namespace:     "default",
		Name:          name,
		Identity:      identity,
		LeaseDuration: time.Second,
		RenewDeadline: 500 * time.Millisecond,
		RetryPeriod:   100 * time.Millisecond,
	}
}

// interval is one stretch of work by one process (and shard).
type interval struct {
	who        string
	shard      int
	start, end time.Time
}

// journal records the intervals the work ran in, to check that no two overlap.
type journal struct {
	mu    sync.Mutex
	spans []interval
}

// work returns a run function that records its interval as who, and takes stopDelay to
// return once its context is done (a loop finishing the reconcile in hand).
func (j *journal) work(who string, shard int, stopDelay time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		j.mu.Lock()
		i := len(j.spans)
		j.spans = append(j.spans, interval{who: who, shard: shard, start: time.Now()})
		j.mu.Unlock()
		<-ctx.Done()
		time.Sleep(stopDelay) // the work's own time to stop, not a wait for something
		j.mu.Lock()
		j.spans[i].end = time.Now()
		j.mu.Unlock()
		return nil
	}
}

// snapshot returns the intervals so far, ongoing ones with a zero end.
func (j *journal) snapshot() []interval {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.spans)
}

// running returns who is working now, per shard.
func (j *journal) running() map[int][]string {
	out := map[int][]string{}
	for _, s := range j.snapshot() {
		if s.end.IsZero() {
			out[s.shard] = append(out[s.shard], s.who)
		}
	}
	return out
}

// requireNoOverlap fails when two intervals of one shard overlap in time.
func (j *journal) requireNoOverlap(t *testing.T) {
	t.Helper()
	byShard := map[int][]interval{}
	for _, s := range j.snapshot() {
		byShard[s.shard] = append(byShard[s.shard], s)
	}
	for shard, spans := range byShard {
		slices.SortFunc(spans, func(a, b interval) int { return a.start.Compare(b.start) })
		for i := 1; i < len(spans); i++ {
			prev, next := spans[i-1], spans[i]
			require.False(t, prev.end.IsZero(), "shard %d: %s still works while %s started at %s", shard, prev.who, next.who, next.start.Format(time.StampMilli))
			require.False(t, next.start.Before(prev.end), "shard %d: %s started at %s before %s stopped at %s",
				shard, next.who, next.start.Format(time.StampMilli), prev.who, prev.end.Format(time.StampMilli))
		}
	}
}

// process is one Elect or Shards call in the background.
type process struct {
	cancel context.CancelFunc
	done   chan error
}

func startProcess(f func(ctx context.Context) error) *process {
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- f(ctx) }()
	return p
}

// stop cancels the process and returns its error.
func (p *process) stop(t *testing.T) error {
	t.Helper()
	p.cancel()
	select {
	case err := <-p.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the process did not return after its context was cancelled")
		return nil
	}
}

var errCutOff = errors.New("connection refused (test partition)")

// cutOff is a host connection whose Lease calls can be cut, as a network partition
// between one process and the API server would, while the rest of its calls go through (the
// worst case: its work can still write).
type cutOff struct {
	federation.ClusterClient
	cut atomic.Bool
}

func (c *cutOff) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if gvr == lease.LeaseGVR && c.cut.Load() {
		return nil, fmt.Errorf("%w: %w", federation.ErrUnreachable, errCutOff)
	}
	return c.ClusterClient.Get(ctx, gvr, ns, name)
}

func (c *cutOff) Update(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if gvr == lease.LeaseGVR && c.cut.Load() {
		return nil, fmt.Errorf("%w: %w", federation.ErrUnreachable, errCutOff)
	}
	return c.ClusterClient.Update(ctx, gvr, u)
}

func (c *cutOff) Create(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if gvr == lease.LeaseGVR && c.cut.Load() {
		return nil, fmt.Errorf("%w: %w", federation.ErrUnreachable, errCutOff)
	}
	return c.ClusterClient.Create(ctx, gvr, u)
}

func (c *cutOff) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if gvr == lease.LeaseGVR && c.cut.Load() {
		return nil, fmt.Errorf("%w: %w", federation.ErrUnreachable, errCutOff)
	}
	return c.ClusterClient.List(ctx, gvr, ns, o)
}

// holder returns the Lease's holder ("" when free or missing).
func holder(t *testing.T, host federation.ClusterClient, name string) string {
	t.Helper()
	u, err := host.Get(context.Background(), lease.LeaseGVR, "default", name)
	if err != nil {
		return ""
	}
	h, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	return h
}
