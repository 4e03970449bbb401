package ha_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/lease"
)

// interval is one stretch of work of a process on a shard (0 under Elect).
type interval struct {
	who        string
	shard      int
	start, end time.Time
}

// write is one successful write a Syncer made, with the time its call started and returned.
type write struct {
	who        string
	shard      int
	cluster    string
	verb       string
	gvr        schema.GroupVersionResource
	key        federation.Key
	start, end time.Time
}

// journal records the intervals of work and the writes made in them.
type journal struct {
	mu     sync.Mutex
	spans  []interval
	writes []write
}

// begin records the start of who's work on shard and returns the function that ends it.
func (j *journal) begin(who string, shard int) func() {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := len(j.spans)
	j.spans = append(j.spans, interval{who: who, shard: shard, start: time.Now()})
	return func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.spans[i].end = time.Now()
	}
}

func (j *journal) snapshot() []interval {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.spans)
}

// running returns, per shard, who works on it now.
func (j *journal) running() map[int][]string {
	out := map[int][]string{}
	for _, s := range j.snapshot() {
		if s.end.IsZero() {
			out[s.shard] = append(out[s.shard], s.who)
		}
	}
	return out
}

// check fails when two intervals of one shard overlap, or a write was made outside an
// interval of its process and shard.
func (j *journal) check(t *testing.T) {
	t.Helper()
	spans := j.snapshot()
	byShard := map[int][]interval{}
	for _, s := range spans {
		byShard[s.shard] = append(byShard[s.shard], s)
	}
	for shard, list := range byShard {
		slices.SortFunc(list, func(a, b interval) int { return a.start.Compare(b.start) })
		for i := 1; i < len(list); i++ {
			prev, next := list[i-1], list[i]
			require.False(t, prev.end.IsZero() || next.start.Before(prev.end),
				"shard %d: %s worked from %s to %s, %s from %s", shard, prev.who, stamp(prev.start), stamp(prev.end), next.who, stamp(next.start))
		}
	}
	j.mu.Lock()
	writes := slices.Clone(j.writes)
	j.mu.Unlock()
	for _, w := range writes {
		inside := slices.ContainsFunc(spans, func(s interval) bool {
			return s.who == w.who && s.shard == w.shard && !w.start.Before(s.start) && (s.end.IsZero() || !w.end.After(s.end))
		})
		require.True(t, inside, "%s (shard %d) wrote %s %s %s in %s at %s-%s, outside its work", w.who, w.shard, w.verb, w.gvr.Resource, w.key, w.cluster, stamp(w.start), stamp(w.end))
	}
	t.Logf("%d intervals of work, %d writes checked", len(spans), len(writes))
}

// creates returns the successful creates of resource gvr by key.
func (j *journal) creates(gvr schema.GroupVersionResource) map[federation.Key][]write {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := map[federation.Key][]write{}
	for _, w := range j.writes {
		if w.verb == "create" && w.gvr == gvr {
			out[w.key] = append(out[w.key], w)
		}
	}
	return out
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// recorder is a ClusterClient whose successful writes are recorded in a journal.
type recorder struct {
	federation.ClusterClient
	j       *journal
	who     string
	shard   int
	cluster string
}

func (r recorder) record(verb string, gvr schema.GroupVersionResource, ns, name string, start time.Time, err error) {
	if err != nil {
		return
	}
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	r.j.writes = append(r.j.writes, write{who: r.who, shard: r.shard, cluster: r.cluster, verb: verb, gvr: gvr,
		key: federation.Key{Namespace: ns, Name: name}, start: start, end: time.Now()})
}

func (r recorder) Create(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	start := time.Now()
	out, err := r.ClusterClient.Create(ctx, gvr, u)
	r.record("create", gvr, u.GetNamespace(), u.GetName(), start, err)
	return out, err
}

func (r recorder) Update(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	start := time.Now()
	out, err := r.ClusterClient.Update(ctx, gvr, u)
	r.record("update", gvr, u.GetNamespace(), u.GetName(), start, err)
	return out, err
}

func (r recorder) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	start := time.Now()
	out, err := r.ClusterClient.UpdateStatus(ctx, gvr, u)
	r.record("update-status", gvr, u.GetNamespace(), u.GetName(), start, err)
	return out, err
}

func (r recorder) Patch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	start := time.Now()
	out, err := r.ClusterClient.Patch(ctx, gvr, ns, name, pt, data)
	r.record("patch", gvr, ns, name, start, err)
	return out, err
}

func (r recorder) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	start := time.Now()
	err := r.ClusterClient.Delete(ctx, gvr, ns, name, opts)
	r.record("delete", gvr, ns, name, start, err)
	return err
}

// recordingSet is a process's ClusterSet whose member clients record their writes; its
// member caches (federation.MemberCache) are the ClusterSet's own.
type recordingSet struct {
	*kube.ClusterSet
	j     *journal
	who   string
	shard int
}

func (s recordingSet) Client(name string) (federation.ClusterClient, error) {
	c, err := s.ClusterSet.Client(name)
	if err != nil {
		return nil, err
	}
	return recorder{ClusterClient: c, j: s.j, who: s.who, shard: s.shard, cluster: name}, nil
}

// process is one control-plane process: its own host client (its Lease calls can be cut
// off), its ClusterSet running all along, and a body (Elect or Shards) run until it is
// killed.
type process struct {
	who    string
	host   *kube.Client
	leases *cutOff
	set    *kube.ClusterSet
	cancel context.CancelFunc
	done   chan error
}

func startProcess(t *testing.T, f *fixture, who string, body func(ctx context.Context, p *process) error) *process {
	t.Helper()
	host, err := kube.New(f.env.Config(hostName), kube.Options{})
	require.NoError(t, err)
	set, err := kube.NewClusterSet(host, kube.ClusterSetOptions{Namespace: system})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{who: who, host: host, leases: &cutOff{ClusterClient: host}, set: set, cancel: cancel, done: make(chan error, 1)}
	setDone := make(chan error, 1)
	go func() { setDone <- set.Run(ctx) }()
	go func() {
		err := body(ctx, p)
		cancel()
		if serr := <-setDone; err == nil {
			err = serr
		}
		p.done <- err
	}()
	t.Cleanup(func() { p.kill(t) })
	return p
}

// kill cancels the process, as a crash would stop it: without ReleaseOnCancel its Leases
// stay until they expire. It returns when everything the process ran has returned.
func (p *process) kill(t *testing.T) {
	t.Helper()
	p.cancel()
	select {
	case err, ok := <-p.done:
		if ok {
			require.NoError(t, err, "process %s", p.who)
			close(p.done)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("process %s did not stop", p.who)
	}
}

// cutOff is a host connection whose Lease calls can be cut, as a partition between one
// process and the API server would, while the process's other calls still go through.
type cutOff struct {
	federation.ClusterClient
	cut atomic.Bool
}

func (c *cutOff) refused(gvr schema.GroupVersionResource) error {
	if gvr == lease.LeaseGVR && c.cut.Load() {
		return fmt.Errorf("%w: connection refused (test partition)", federation.ErrUnreachable)
	}
	return nil
}

func (c *cutOff) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if err := c.refused(gvr); err != nil {
		return nil, err
	}
	return c.ClusterClient.Get(ctx, gvr, ns, name)
}

func (c *cutOff) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if err := c.refused(gvr); err != nil {
		return nil, err
	}
	return c.ClusterClient.List(ctx, gvr, ns, o)
}

func (c *cutOff) Create(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := c.refused(gvr); err != nil {
		return nil, err
	}
	return c.ClusterClient.Create(ctx, gvr, u)
}

func (c *cutOff) Update(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := c.refused(gvr); err != nil {
		return nil, err
	}
	return c.ClusterClient.Update(ctx, gvr, u)
}
