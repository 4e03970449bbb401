package sync_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
	fedsync "github.com/fedkit/fedkit/sync"
)

// The benchmarks measure sync against the fake fleet, whose own cost (normalising, decoding
// into the Go type and validating every object written) is in every figure: the propagation
// benchmark creates the same member objects directly in the same run, so "sync/raw-%" is the
// share of the fake's own throughput sync keeps. On a machine shared with other work the wall
// times (members/s) swing with the load; the CPU times per member object are steadier.
//
//	go test ./sync -run '^$' -bench 'Propagation|Resync|TemplateChange' -benchtime 1x
//
// Sizes: N federated objects x C clusters. N=10,000 x C=100 holds a million member objects in
// the fake (about 6.5 GB of live heap, 13 GB of RSS): run it alone, with -benchtime 1x.

var benchSizes = []struct{ n, c int }{{1000, 10}, {1000, 100}, {10000, 10}, {10000, 100}}

const benchObject = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {namespace: bench}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "web:1", ports: [{containerPort: 8080}]}]}
  placement: {clusterSelector: {}}
`

// benchFleet is a host with n federated objects and a fleet of c registered members.
type benchFleet struct {
	host  *fake.Cluster
	fleet *fake.Fleet
	keys  []federation.Key
	s     *fedsync.Syncer
	reg   *prometheus.Registry
	clock *clocktesting.FakeClock
}

// passes is how many reconciles the Syncer ran.
func (f *benchFleet) passes() float64 {
	mfs, _ := f.reg.Gather()
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "fedkit_reconciles_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func newBenchFleet(b *testing.B, n, c int) *benchFleet {
	b.Helper()
	return newBenchFleetClock(b, n, c, nil)
}

// newBenchFleetClock is newBenchFleet with the Syncer on clk (nil: the real clock).
func newBenchFleetClock(b *testing.B, n, c int, clk *clocktesting.FakeClock) *benchFleet {
	b.Helper()
	f := &benchFleet{host: fake.NewHost("host"), fleet: fake.NewFleet(), clock: clk}
	f.host.SetRecording(false) // a benchmark would keep a copy of every object written
	f.fleet.SetRecording(false)
	for i := range c {
		f.fleet.Add(fmt.Sprintf("member-%03d", i), nil)
	}
	if err := f.fleet.Register(ctx, f.host); err != nil {
		b.Fatal(err)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "bench"}}}
	if _, err := f.host.Create(ctx, namespaces, ns); err != nil {
		b.Fatal(err)
	}
	for _, name := range f.fleet.Names() {
		m, _ := f.fleet.Member(name)
		if err := m.Seed(ns.DeepCopy()); err != nil {
			b.Fatal(err)
		}
	}
	tmpl := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(benchObject), &tmpl.Object); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		u := tmpl.DeepCopy()
		u.SetName(fmt.Sprintf("web-%05d", i))
		if _, err := f.host.Create(ctx, federation.DeploymentType.FederatedGVR(), u); err != nil {
			b.Fatal(err)
		}
		f.keys = append(f.keys, federation.Key{Namespace: "bench", Name: u.GetName()})
	}
	f.reg = prometheus.NewRegistry()
	opts := fedsync.Options{ClusterQPS: -1, Registerer: f.reg}
	if clk != nil {
		opts.Clock = clk
	}
	s, err := fedsync.New(f.host, f.fleet, federation.DeploymentType, opts)
	if err != nil {
		b.Fatal(err)
	}
	f.s = s
	return f
}

// run starts the Syncer's Run (two workers, the production path: host and member caches)
// and returns a func that stops it.
func (f *benchFleet) run(b *testing.B) func() {
	b.Helper()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.s.Run(rctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// waitWrites waits until the members have received n writes in all.
func (f *benchFleet) waitWrites(b *testing.B, n int) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for f.memberWrites() < n {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d member writes after 10 minutes", f.memberWrites(), n)
		}
		// Counting locks every member: often enough to stop the clock within a few
		// milliseconds, rarely enough not to slow the writers down.
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *benchFleet) memberWrites() int {
	n := 0
	for _, name := range f.fleet.Names() {
		m, _ := f.fleet.Member(name)
		for v, c := range m.ActionCounts() {
			if writeVerbs[v] {
				n += c
			}
		}
	}
	return n
}

// BenchmarkInitialPropagation measures the first propagation of N federated objects to C
// clusters by Run (from start, caches included, to the last member object written) against
// the raw creates of the same member objects in the same fleet, alternated in every iteration
// so that both see the same machine. It reports each one's member objects per second, wall
// and CPU time per member object, the bytes each allocates per member object (what the
// garbage collector's share of the CPU follows), and sync's throughput as a percentage of
// raw's. In a CPU
// profile the two sides carry the label phase=sync or phase=raw (pprof -tagfocus phase=sync);
// the garbage collector's own workers carry none.
func BenchmarkInitialPropagation(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("N=%d/C=%d", size.n, size.c), func(b *testing.B) {
			var syncT, rawT phase
			passes := 0.0
			for b.Loop() {
				b.StopTimer()
				f := newBenchFleet(b, size.n, size.c)
				syncT.start(b)
				var stop func()
				pprof.Do(ctx, pprof.Labels("phase", "sync"), func(context.Context) {
					stop = f.run(b) // Run's goroutines carry the label
					f.waitWrites(b, size.n*size.c)
				})
				syncT.stop(b)
				stop()
				passes += f.passes() / float64(size.n)
				f = newBenchFleet(b, size.n, size.c)
				objs := renderAll(b, f)
				rawT.start(b)
				pprof.Do(ctx, pprof.Labels("phase", "raw"), func(context.Context) { rawCreate(b, f, objs) })
				rawT.stop(b)
				b.StartTimer() // b.Loop wants it running
			}
			members := float64(size.n * size.c * b.N)
			b.ReportMetric(members/syncT.wall.Seconds(), "sync-members/s")
			b.ReportMetric(members/rawT.wall.Seconds(), "raw-members/s")
			b.ReportMetric(100*rawT.wall.Seconds()/syncT.wall.Seconds(), "sync/raw-%")
			b.ReportMetric(float64(syncT.cpu.Microseconds())/members, "sync-cpu-us/member")
			b.ReportMetric(float64(rawT.cpu.Microseconds())/members, "raw-cpu-us/member")
			b.ReportMetric(float64(syncT.alloc)/members, "sync-B/member")
			b.ReportMetric(float64(rawT.alloc)/members, "raw-B/member")
			b.ReportMetric(passes/float64(b.N), "passes/object")
		})
	}
}

// phase accumulates the wall and CPU time of one side of a comparison. Each measure starts
// after a garbage collection, so neither side pays for the other's garbage, and runs with the
// benchmark timer on.
type phase struct {
	wall, cpu  time.Duration
	alloc      uint64 // bytes allocated (the garbage collector's work follows it)
	began      time.Time
	cpuAtBegin time.Duration
	allocAt    uint64
}

func (p *phase) start(b *testing.B) {
	runtime.GC()
	p.allocAt = totalAlloc()
	p.began, p.cpuAtBegin = time.Now(), cpuTime()
	b.StartTimer()
}

func (p *phase) stop(b *testing.B) {
	b.StopTimer()
	p.wall += time.Since(p.began)
	p.cpu += cpuTime() - p.cpuAtBegin
	p.alloc += totalAlloc() - p.allocAt
}

// totalAlloc is the bytes allocated so far (runtime/metrics: no stop of the world).
func totalAlloc() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// renderAll renders every member object once, as the raw baseline writes them: what sync
// writes at revision 1. The fleet's clusters have no labels and the objects no overrides, so
// one render serves every cluster.
func renderAll(b *testing.B, f *benchFleet) []*unstructured.Unstructured {
	b.Helper()
	var out []*unstructured.Unstructured
	for _, k := range f.keys {
		u, err := f.host.Peek(federation.DeploymentType.FederatedGVR(), k.Namespace, k.Name)
		if err != nil {
			b.Fatal(err)
		}
		fed, err := federation.FederatedObjectFromUnstructured(u)
		if err != nil {
			b.Fatal(err)
		}
		in := override.InputFor(fed, federation.DeploymentType)
		in.Revision = 1
		obj, err := override.Render(in)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, obj)
	}
	return out
}

// rawCreate creates every object in every member on two workers: the fake's own throughput.
func rawCreate(b *testing.B, f *benchFleet, objs []*unstructured.Unstructured) {
	b.Helper()
	names := f.fleet.Names()
	const workers = 2
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := w; i < len(objs); i += workers {
				for _, name := range names {
					m, _ := f.fleet.Member(name)
					if _, err := m.Create(ctx, deployments, objs[i]); err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResync measures the periodic resync of Run when nothing changed: every object is
// checked against its members from the caches. It fails if a resync writes anything or makes
// a single API read.
func BenchmarkResync(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("N=%d/C=%d", size.n, size.c), func(b *testing.B) {
			f := newBenchFleetClock(b, size.n, size.c, clocktesting.NewFakeClock(time.Now()))
			stop := f.run(b)
			defer stop()
			f.waitWrites(b, size.n*size.c)
			f.waitPasses(b, f.passes()) // let the requeues of the initial writes settle
			calls := f.calls()
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			cpu := cpuTime()
			for b.Loop() {
				want := f.passes() + float64(size.n)
				f.clock.Step(fedsync.DefaultResyncPeriod)
				f.waitPasses(b, want)
			}
			b.StopTimer()
			cpu = cpuTime() - cpu
			if diff := f.calls() - calls; diff != 0 {
				b.Fatalf("a resync with nothing to do made %d API calls (reads or writes)", diff)
			}
			pairs := float64(size.n * size.c)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pairs, "ns/member")
			// The process's CPU time: steadier than the wall time on a shared machine.
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/pairs, "cpu-ns/member")
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/pairs, "B-alloc/member")
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc)/pairs, "B-heap/member")
		})
	}
}

// BenchmarkTemplateChange measures one template change of every object propagated by Run to
// every cluster (the time includes the host-side edits that start it). It fails unless that
// makes exactly one write per cluster per object.
func BenchmarkTemplateChange(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("N=%d/C=%d", size.n, size.c), func(b *testing.B) {
			f := newBenchFleet(b, size.n, size.c)
			stop := f.run(b)
			defer stop()
			f.waitWrites(b, size.n*size.c)
			version := 1
			for b.Loop() {
				version++
				writes := f.memberWrites()
				img := fmt.Sprintf("web:%d", version)
				for _, k := range f.keys {
					if err := f.host.Drift(federation.DeploymentType.FederatedGVR(), k.Namespace, k.Name, setImage(img)); err != nil {
						b.Fatal(err)
					}
				}
				f.waitWrites(b, writes+size.n*size.c)
				b.StopTimer()
				f.waitPasses(b, f.passes())
				if w := f.memberWrites() - writes; w != size.n*size.c {
					b.Fatalf("one template change made %d member writes; want exactly %d", w, size.n*size.c)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(size.n*size.c)*float64(b.N)/b.Elapsed().Seconds(), "members/s")
		})
	}
}

// waitPasses waits until the Syncer has run at least n passes and then until it is idle (no
// pass for a moment).
func (f *benchFleet) waitPasses(b *testing.B, n float64) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for f.passes() < n {
		if time.Now().After(deadline) {
			b.Fatalf("%v of %v passes after 10 minutes", f.passes(), n)
		}
		time.Sleep(time.Millisecond)
	}
	for last := -1.0; last != f.passes(); {
		last = f.passes()
		time.Sleep(20 * time.Millisecond)
	}
}

// calls counts every API call to the host and the members.
func (f *benchFleet) calls() int {
	n := 0
	for _, c := range append([]*fake.Cluster{f.host}, f.members()...) {
		for v, k := range c.ActionCounts() {
			if v != fake.VerbWatch {
				n += k
			}
		}
	}
	return n
}

func (f *benchFleet) members() []*fake.Cluster {
	var out []*fake.Cluster
	for _, name := range f.fleet.Names() {
		m, _ := f.fleet.Member(name)
		out = append(out, m)
	}
	return out
}
