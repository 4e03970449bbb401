package scale_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/hostcache"
	fedsync "github.com/fedkit/fedkit/sync"
)

// memFleet is a fake host holding n FederatedConfigMaps placed on every cluster, a fake fleet of
// c members, and the control planes that run over them (one, or one per static shard), all on
// one fake clock.
type memFleet struct {
	n, c, shards int
	host         *fake.Cluster
	fleet        *fake.Fleet
	clock        *clocktesting.FakeClock
	regs         []*prometheus.Registry
	cps          []*controlplane.ControlPlane
	stops        []func() error
	steps        int // fake clock steps taken while waiting for progress
	watches      *watchCount

	readyMu sync.Mutex
	readyN  int               // objects Ready as the harness's watch saw them last
	waiting map[string]string // the objects not Ready: their conditions, for the progress log
}

var (
	fedConfigMaps = federation.ConfigMapType.FederatedGVR()
	configMaps    = federation.ConfigMapType.TargetGVR()
	namespaces    = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	writeVerbs    = map[fake.Verb]bool{fake.VerbCreate: true, fake.VerbUpdate: true, fake.VerbUpdateStatus: true, fake.VerbPatch: true, fake.VerbDelete: true}
)

const memNamespace = "scale"

// newMemFleet builds the host and fleet and seeds the federated objects; no loop runs yet.
func newMemFleet(t testing.TB, n, c, shards int) *memFleet {
	t.Helper()
	ctx := context.Background()
	f := &memFleet{n: n, c: c, shards: max(shards, 1), host: fake.NewHost("host"), fleet: fake.NewFleet(), clock: clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))}
	// Recording every action would keep a copy of every object written: counting stays on.
	f.host.SetRecording(false)
	f.fleet.SetRecording(false)
	f.host.SetInterning(true) // the memory figures are the point here: see SCALE.md
	f.fleet.SetInterning(true)
	f.host.SetClock(f.clock)
	f.fleet.SetClock(f.clock)
	for i := range c {
		f.fleet.Add(fmt.Sprintf("member-%03d", i), nil)
	}
	require.NoError(t, f.fleet.Register(ctx, f.host))
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": memNamespace}}}
	_, err := f.host.Create(ctx, namespaces, ns)
	require.NoError(t, err)
	for _, name := range f.fleet.Names() {
		m, _ := f.fleet.Member(name)
		require.NoError(t, m.Seed(ns.DeepCopy()))
	}
	for i := range n {
		_, err := f.host.Create(ctx, fedConfigMaps, federatedConfigMap(memNamespace, objectName(i), "1"))
		require.NoError(t, err)
	}
	f.watchReady(t)
	return f
}

func objectName(i int) string { return fmt.Sprintf("cm-%05d", i) }

// federatedConfigMap is a FederatedConfigMap placed on every cluster, its data carrying version.
func federatedConfigMap(ns, name, version string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "types.federation.k8s.io/v1alpha1",
		"kind":       "FederatedConfigMap",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"template":  map[string]any{"data": map[string]any{"version": version, "app.properties": "color=blue\nsize=large\n"}},
			"placement": map[string]any{"clusterSelector": map[string]any{}},
		},
	}}
}

// start builds and runs the control planes: one with the zero Shard, or one per static shard.
// Member writes are not rate limited (ClusterQPS -1): the figures are the control plane's own
// cost, not a configured limit on a fake clock. Events are not recorded (each would be a host
// write the real servers' run measures instead).
//
// Static shards share one host cache (controlplane.Options.Cache), run by the harness and
// stopped after them, as an embedder that runs several shards in one process does: 4 shards
// hold one copy of every host object and open one watch per resource.
func (f *memFleet) start(t testing.TB) {
	t.Helper()
	if f.watches == nil {
		f.watches = &watchCount{ClusterClient: f.host, open: map[string]int{}, peak: map[string]int{}}
	}
	var shared *hostcache.Cache
	if f.shards > 1 {
		c, err := hostcache.New(f.watches, hostcache.Options{})
		require.NoError(t, err)
		shared = c
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		defer func() { f.stops = append(f.stops, func() error { cancel(); return <-done }) }()
	}
	for i := range f.shards {
		reg := prometheus.NewRegistry()
		o := controlplane.Options{
			Types:      []federation.TypeConfig{federation.ConfigMapType},
			Clock:      f.clock,
			Registerer: reg,
			Disable:    controlplane.Parts{DNS: true, Events: true, ClusterSet: i > 0},
		}
		if f.shards > 1 {
			o.Shard = federation.Shard{Index: i, Count: f.shards}
			o.Cache = shared
		}
		o.Sync.ClusterQPS = -1
		cp, err := controlplane.New(f.watches, f.fleet, o)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- cp.Run(ctx) }()
		f.regs = append(f.regs, reg)
		f.cps = append(f.cps, cp)
		f.stops = append(f.stops, func() error { cancel(); return <-done })
	}
}

// stop stops every control plane and fails on an error from Run.
func (f *memFleet) stop(t testing.TB) {
	t.Helper()
	for _, s := range f.stops {
		require.NoError(t, s())
	}
	f.stops = nil
}

// writes counts the write requests the members and the host have served.
func (f *memFleet) writes() (member, host int) {
	for _, name := range f.fleet.Names() {
		m, _ := f.fleet.Member(name)
		member += countWrites(m)
	}
	return member, countWrites(f.host)
}

func countWrites(c *fake.Cluster) int {
	n := 0
	for v, k := range c.ActionCounts() {
		if writeVerbs[v] {
			n += k
		}
	}
	return n
}

// reconciles is the sum of fedkit_reconciles_total of loop over every control plane.
func (f *memFleet) reconciles(t testing.TB, loop string) float64 {
	t.Helper()
	n := 0.0
	for _, reg := range f.regs {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() != "fedkit_reconciles_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "loop" && l.GetValue() == loop {
						n += m.GetCounter().GetValue()
					}
				}
			}
		}
	}
	return n
}

// readyCount is how many federated objects have Propagated and Ready True, with their latest
// generation observed, as the harness's watch of the host last saw them (see watchReady).
func (f *memFleet) readyCount() int {
	f.readyMu.Lock()
	defer f.readyMu.Unlock()
	return f.readyN
}

// watchReady follows the federated objects' readiness through a watch of the host, as a
// client would. Polling a copy of every object instead (Cluster.Objects) costs a copy of
// N objects with N x C status entries per poll, holding the host's lock: at 10,000 x 100 that
// is gigabytes a second of garbage and a host stalled behind the harness.
func (f *memFleet) watchReady(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := f.host.Watch(ctx, fedConfigMaps, memNamespace, metav1.ListOptions{})
	require.NoError(t, err)
	done := make(chan struct{})
	ready := map[string]bool{}
	f.readyMu.Lock()
	f.waiting = map[string]string{}
	f.readyMu.Unlock()
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			now := ev.Type != watch.Deleted && conditionTrue(u, "Ready") && conditionTrue(u, "Propagated")
			f.readyMu.Lock()
			if now != ready[u.GetName()] {
				if now {
					f.readyN++
				} else {
					f.readyN--
				}
			}
			ready[u.GetName()] = now
			if now {
				delete(f.waiting, u.GetName())
			} else {
				f.waiting[u.GetName()] = conditionsOf(u)
			}
			f.readyMu.Unlock()
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
}

// notReady describes up to three objects not Ready, for the progress log.
func (f *memFleet) notReady() string {
	f.readyMu.Lock()
	defer f.readyMu.Unlock()
	var out []string
	for name, conds := range f.waiting {
		if len(out) == 3 {
			break
		}
		out = append(out, name+": "+conds)
	}
	return strings.Join(out, "; ")
}

// conditionsOf summarises u's generation and conditions.
func conditionsOf(u *unstructured.Unstructured) string {
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	s := fmt.Sprintf("generation %d observed %d", u.GetGeneration(), observed)
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			s += fmt.Sprintf(", %v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"])
		}
	}
	return s
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			return m["status"] == "True" && observed == u.GetGeneration()
		}
	}
	return false
}

// waitFor polls cond until it holds. When nothing was written and no loop finished a pass for
// a while the loops are idle on the fake clock (a requeue after, a probe period): the clock
// then steps a second. Passes count too: a resync writes nothing for minutes at 10,000 x 100,
// and stepping the clock under it would fire probes and heartbeats that are not the resync's.
func (f *memFleet) waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := f.progress(t)
	idle, logged := time.Now(), time.Now()
	for !cond() {
		if time.Since(logged) > 30*time.Second {
			// A big run takes minutes: say where it is.
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m, h := f.writes()
			t.Logf("%s: waiting: %d member and %d host writes, %d of %d objects Ready, HeapInuse %s, %d clock steps; not Ready: %s", what, m, h, f.readyCount(), f.n, mib(ms.HeapInuse), f.steps, f.notReady())
			logged = time.Now()
		}
		if time.Now().After(deadline) {
			m, h := f.writes()
			t.Fatalf("%s: not after %s (%d member and %d host writes, %d of %d objects Ready)", what, timeout, m, h, f.readyCount(), f.n)
		}
		time.Sleep(50 * time.Millisecond)
		if p := f.progress(t); p != last {
			last, idle = p, time.Now()
			continue
		}
		if time.Since(idle) > 300*time.Millisecond {
			f.clock.Step(time.Second)
			f.steps++
			idle = time.Now()
		}
	}
}

// progress is the member and host writes and the passes of every loop so far: while it
// changes, the loops are busy.
func (f *memFleet) progress(t testing.TB) string {
	m, h := f.writes()
	return fmt.Sprint(m, h, f.reconciles(t, "sync"), f.reconciles(t, "status"), f.reconciles(t, "scheduler"))
}

// settle waits until the control plane is quiet: no write and no reconcile of any loop for a
// quiet period, and then idleSeconds steps of the fake clock, a second each, that move
// nothing. The steps are what let work that waits on the clock finish (the shared status
// writer's pending changes waiting for their window, the copies of its writes it forgets
// five windows later): without them a heap profile catches that work, and what it keeps, in
// flight.
func (f *memFleet) settle(t testing.TB) {
	const idleSeconds = 15 // more than the status writer's five windows of 2 s
	t.Helper()
	const quiet = 500 * time.Millisecond
	deadline := time.Now().Add(10 * time.Minute)
	state := func() string { return f.progress(t) }
	last := state()
	wait := func() {
		for since := time.Now(); time.Since(since) < quiet; {
			require.True(t, time.Now().Before(deadline), "the loops did not settle in 10 minutes")
			time.Sleep(50 * time.Millisecond)
			if s := state(); s != last {
				last, since = s, time.Now()
			}
		}
	}
	wait()
	for idle := 0; idle < idleSeconds; {
		before := last
		f.clock.Step(time.Second)
		f.steps++
		wait()
		idle++
		if last != before {
			idle = 0
		}
	}
}

// heapSampler records the peak HeapInuse, sampled every 100ms until stopped.
type heapSampler struct {
	mu   sync.Mutex
	peak uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			h.sample()
			select {
			case <-h.stop:
				h.sample()
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.mu.Lock()
	h.peak = max(h.peak, ms.HeapInuse)
	h.mu.Unlock()
}

// Stop ends the sampling and returns the peak in bytes.
func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

// memResult is what one in-memory run measured.
type memResult struct {
	n, c, shards             int
	converge, resync, change time.Duration
	resyncReconciles         float64
	resyncWrites             [2]int // member, host (the monitor's heartbeats left out)
	changeWrites             int    // member writes of the template change
	peakHeap, liveHeap       uint64
	steps                    [3]int // fake clock seconds stepped in each phase while the loops were idle
}

func (r memResult) String() string {
	return fmt.Sprintf("| %d x %d | %d | %s | %s | %s | %.0f | %s | %s | %v |", r.n, r.c, r.shards,
		r.converge.Round(10*time.Millisecond), r.resync.Round(10*time.Millisecond), r.change.Round(10*time.Millisecond),
		float64(r.n*r.c)/r.converge.Seconds(), mib(r.peakHeap), mib(r.liveHeap), r.steps)
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

// runMemory runs the three phases over n objects x c clusters with the given shards, asserting
// convergence, a resync with zero writes and a template change of exactly one write per object
// and cluster.
func runMemory(t testing.TB, n, c, shards int) memResult {
	t.Helper()
	res := memResult{n: n, c: c, shards: max(shards, 1)}
	runtime.GC()
	heap := sampleHeap()
	f := newMemFleet(t, n, c, shards)
	timeout := 10*time.Minute + time.Duration(n*c)*time.Millisecond

	// 1. Converge from empty: every object in every cluster, and Ready.
	begin := time.Now()
	f.start(t)
	defer func() {
		if f.stops != nil {
			f.stop(t)
		}
	}()
	f.waitFor(t, "propagated", timeout, func() bool {
		m, _ := f.writes()
		return m >= n*c
	})
	f.waitFor(t, "Ready", timeout, func() bool { return f.readyCount() == n })
	res.converge = time.Since(begin)
	t.Logf("converged in %s", res.converge)
	t.Logf("host watches open at most at once, by resource, over %d control plane(s): %s", res.shards, f.watches)
	for res, n := range f.watches.peaks() {
		require.LessOrEqual(t, n, 1, "host watches of %s open at once: the shards share one cache", res)
	}
	res.steps[0] = f.steps
	f.settle(t)
	m, _ := f.writes()
	require.Equal(t, n*c, m, "member writes to converge from empty: want one create per object and cluster")
	writeHeapProfile(t, res, "converged")
	if *convergeOnlyFlag {
		// Only the heap after convergence is wanted (SCALE.md's breakdown): stop here.
		res.peakHeap = heap.Stop()
		res.liveHeap = liveHeap()
		f.stop(t)
		runtime.KeepAlive(f)
		return res
	}

	// 2. A resync with nothing to do: every loop's periodic pass over every object, zero writes.
	m0, h0 := f.writes()
	f.host.SetRecording(true)
	syncs := f.reconciles(t, "sync")
	begin = time.Now()
	f.clock.Step(fedsync.DefaultResyncPeriod)
	f.waitFor(t, "resync", timeout, func() bool { return f.reconciles(t, "sync") >= syncs+float64(n) })
	res.resync = time.Since(begin)
	res.steps[1] = f.steps - res.steps[0]
	t.Logf("resync in %s", res.resync)
	f.settle(t)
	res.resyncReconciles = f.reconciles(t, "sync") - syncs
	m1, h1 := f.writes()
	res.resyncWrites = [2]int{m1 - m0, h1 - h0}
	require.Zero(t, m1-m0, "member writes in a resync with nothing to do")
	// The cluster monitor's heartbeat (Cluster status.lastHeartbeatTime, once per cluster per
	// probe) is the only host write a resync may make.
	heartbeats := 0
	for _, a := range f.host.Actions() {
		if !writeVerbs[a.Verb] {
			continue
		}
		if a.Resource == federation.ClusterGVR && a.Subresource == "status" {
			heartbeats++
			continue
		}
		t.Errorf("a resync with nothing to do wrote to the host: %s %s %s/%s %s", a.Verb, a.Resource.Resource, a.Namespace, a.Name, a.Subresource)
	}
	f.host.SetRecording(false)
	require.LessOrEqual(t, heartbeats, c, "Cluster status writes in a resync: at most one heartbeat per cluster")
	res.resyncWrites[1] = h1 - h0 - heartbeats

	// 3. One template change of every object, propagated to every cluster.
	begin = time.Now()
	for i := range n {
		require.NoError(t, f.host.Drift(fedConfigMaps, memNamespace, objectName(i), func(u *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(u.Object, "2", "spec", "template", "data", "version"))
		}))
	}
	f.waitFor(t, "template change propagated", timeout, func() bool {
		m, _ := f.writes()
		return m >= m1+n*c
	})
	f.waitFor(t, "Ready after the change", timeout, func() bool { return f.readyCount() == n })
	res.change = time.Since(begin)
	res.steps[2] = f.steps - res.steps[0] - res.steps[1]
	f.settle(t)
	m2, _ := f.writes()
	res.changeWrites = m2 - m1
	require.Equal(t, n*c, m2-m1, "member writes of one template change: want exactly one per object and cluster")
	f.checkMembers(t, "2")
	writeHeapProfile(t, res, "changed")

	res.peakHeap = heap.Stop()
	res.liveHeap = liveHeap()
	f.stop(t)
	runtime.KeepAlive(f)
	return res
}

// liveHeap is HeapInuse after a GC.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// checkMembers checks that every member holds every object with data version v.
func (f *memFleet) checkMembers(t testing.TB, v string) {
	t.Helper()
	var wrong []string
	for _, name := range f.fleet.Names() {
		m, _ := f.fleet.Member(name)
		for i := range f.n {
			u, err := m.Peek(configMaps, memNamespace, objectName(i))
			if err != nil {
				wrong = append(wrong, fmt.Sprintf("%s/%s: %v", name, objectName(i), err))
				continue
			}
			if got, _, _ := unstructured.NestedString(u.Object, "data", "version"); got != v {
				wrong = append(wrong, fmt.Sprintf("%s/%s: version %q", name, objectName(i), got))
			}
		}
	}
	if len(wrong) > 0 {
		t.Fatalf("%d member objects wrong, the first: %s", len(wrong), strings.Join(wrong[:min(5, len(wrong))], "; "))
	}
}

// watchCount is the control planes' host with the most watches open at once counted by
// resource: with the loops' shared cache, one per resource per control plane.
type watchCount struct {
	federation.ClusterClient
	mu         sync.Mutex
	open, peak map[string]int
}

func (w *watchCount) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	wi, err := w.ClusterClient.Watch(ctx, gvr, namespace, opts)
	if err != nil {
		return nil, err
	}
	res := gvr.Resource
	w.mu.Lock()
	w.open[res]++
	w.peak[res] = max(w.peak[res], w.open[res])
	w.mu.Unlock()
	return &countedWatch{Interface: wi, done: func() {
		w.mu.Lock()
		w.open[res]--
		w.mu.Unlock()
	}}, nil
}

// peaks returns the most watches open at once, by resource.
func (w *watchCount) peaks() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.peak)
}

func (w *watchCount) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.peak)
}

// countedWatch calls done once, when it is stopped.
type countedWatch struct {
	watch.Interface
	once sync.Once
	done func()
}

func (c *countedWatch) Stop() {
	c.Interface.Stop()
	c.once.Do(c.done)
}
