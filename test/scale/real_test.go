package scale_test

import (
	"context"
	"fmt"
	"maps"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

// realFleet is the shared host and members with fedkit's CRDs and the members registered, a
// control plane for FederatedConfigMap running with production defaults (client QPS and Burst,
// sync's per-cluster limit, workers), and unthrottled clients the test measures with.
type realFleet struct {
	env     *testenv.Env
	host    *kube.Client // the test's own client of the host, unthrottled
	reg     *prometheus.Registry
	counted *countingHost           // the control plane's host client, counting its requests
	members map[string]*kube.Client // the test's own clients of the members, unthrottled

	// With -scale.process: the control plane is this process (reg and counted are nil), and
	// writes0 are the host's writes when the measured phase began (markWrites).
	proc    *managertest.Process
	writes0 map[string]float64
	// nsEvents are the Event writes about the run's objects, as events counted them (a new
	// Event, or one more count of it).
	nsEvents int
}

// startReal sets up the servers and runs a control plane until the test ends.
func startReal(t *testing.T, opts controlplane.Options) *realFleet {
	t.Helper()
	harness := labelHarness(t)
	env := testenv.Shared(t)
	f := &realFleet{env: env, members: map[string]*kube.Client{}}
	f.host = unthrottled(t, env, hostName)
	if *processFlag {
		startProcess(t, f)
		return f
	}
	crds, err := federation.CRDs(federation.ConfigMapType)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, conformance.InstallCRDs(ctx, f.host, crds...))
	f.createNamespace(t, f.host, "fedkit-system")
	for _, name := range memberNames {
		f.members[name] = unthrottled(t, env, name)
		env.Register(t, f.host, name, name, "fedkit-system")
	}

	// The control plane's clients get kube's defaults, as in production: testenv's configs
	// raise QPS and Burst for tests, so they are reset here.
	cfg := env.Config(hostName)
	cfg.QPS, cfg.Burst = 0, 0
	if *hostQPSFlag != 0 {
		cfg.QPS, cfg.Burst = float32(*hostQPSFlag), max(1, 2**hostQPSFlag)
	}
	var (
		host *kube.Client
		set  *kube.ClusterSet
	)
	// Whatever the control plane's clients start (their connections' read loops) is labelled
	// its own, as is its Run below.
	pprof.Do(harness, pprof.Labels(profileLabel, "controlplane"), func(context.Context) {
		host, set, err = kube.Connect(cfg, kube.ClusterSetOptions{})
	})
	require.NoError(t, err)
	opts.Types = []federation.TypeConfig{federation.ConfigMapType}
	opts.Disable.DNS = true
	opts.Disable.Scheduler = *noSchedFlag
	opts.Sync.ClusterQPS = *clusterQPSFlag
	if *workersFlag > 0 {
		opts.Sync.Workers, opts.Status.Workers, opts.Scheduler.Workers = *workersFlag, *workersFlag, *workersFlag
	}
	f.reg = prometheus.NewRegistry()
	opts.Registerer = f.reg
	f.counted = newCountingHost(host)
	var cp *controlplane.ControlPlane
	pprof.Do(harness, pprof.Labels(profileLabel, "controlplane"), func(context.Context) {
		cp, err = controlplane.New(f.counted, set, opts)
	})
	require.NoError(t, err)
	rctx, rcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The label splits a CPU profile (-scale.cpuprofile) between the control plane and the
	// harness: goroutines inherit it from the one that starts them.
	go pprof.Do(rctx, pprof.Labels(profileLabel, "controlplane"), func(ctx context.Context) { done <- cp.Run(ctx) })
	t.Cleanup(func() {
		rcancel()
		require.NoError(t, <-done)
	})
	f.waitMembersReady(t)
	return f
}

// waitMembersReady waits until the control plane's monitor has marked every member Ready.
func (f *realFleet) waitMembersReady(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, m := range memberNames {
			if !testenv.ClusterReady(t, f.host, m) {
				return false
			}
		}
		return true
	}, 90*time.Second, 50*time.Millisecond, "every member Ready (the monitor's probes)")
}

// unthrottled is a client of the named cluster without client-side rate limit: the test's
// creates and watches measure the servers, not a token bucket.
func unthrottled(t *testing.T, env *testenv.Env, name string) *kube.Client {
	t.Helper()
	cfg := env.Config(name)
	cfg.QPS, cfg.Burst = -1, 0 // client-go: a negative QPS means no rate limiter
	c, err := kube.New(cfg, kube.Options{})
	require.NoError(t, err)
	return c
}

func (f *realFleet) createNamespace(t *testing.T, c *kube.Client, name string) {
	t.Helper()
	fedtest.Create(t, c, namespaces, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, name))
}

// watchAdds watches ConfigMaps in namespace ns of every member and records when each name was
// first seen in each member, by the test process's clock.
type watchAdds struct {
	mu    sync.Mutex
	seen  map[string]map[string]time.Time // name -> member -> first seen
	stops []func()
}

func (f *realFleet) watchMembers(t *testing.T, ns string) *watchAdds {
	t.Helper()
	w := &watchAdds{seen: map[string]map[string]time.Time{}}
	for _, m := range memberNames {
		wi, err := f.members[m].Watch(context.Background(), configMaps, ns, metav1.ListOptions{})
		require.NoError(t, err)
		w.stops = append(w.stops, wi.Stop)
		go func() {
			for ev := range wi.ResultChan() {
				if ev.Type != watch.Added {
					continue
				}
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				now := time.Now()
				w.mu.Lock()
				if w.seen[u.GetName()] == nil {
					w.seen[u.GetName()] = map[string]time.Time{}
				}
				if _, ok := w.seen[u.GetName()][m]; !ok {
					w.seen[u.GetName()][m] = now
				}
				w.mu.Unlock()
			}
		}()
	}
	t.Cleanup(w.stop)
	return w
}

func (w *watchAdds) stop() {
	for _, s := range w.stops {
		s()
	}
	w.stops = nil
}

// complete is how many names were seen in every member.
func (w *watchAdds) complete() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.seen {
		if len(m) == len(memberNames) {
			n++
		}
	}
	return n
}

// last is when name was seen in the last member.
func (w *watchAdds) last(name string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, at := range w.seen[name] {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// parallel runs do(i) for i in [0, n) on workers goroutines and returns the first error.
func parallel(n, workers int, do func(i int) error) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// realResult is what one run on real servers measured.
type realResult struct {
	n        int
	ns       string        // the namespace of the federated objects
	raw, fed time.Duration // raw: every member object created directly; fed: propagated
	// rawCPU, fedCPU: CPU milliseconds per object of each process in each phase.
	rawCPU, fedCPU   map[string]float64
	p50, p99, maxLat time.Duration
}

func (r realResult) rawRate() float64 { return float64(r.n) / r.raw.Seconds() }
func (r realResult) fedRate() float64 { return float64(r.n) / r.fed.Seconds() }

// cpu is the CPU per object of each process in both phases.
func (r realResult) cpu() string {
	names := slices.Sorted(maps.Keys(r.fedCPU))
	lines := []string{"CPU ms per object | raw | federated"}
	var raw, fed float64
	for _, k := range names {
		lines = append(lines, fmt.Sprintf("%s | %.2f | %.2f", k, r.rawCPU[k], r.fedCPU[k]))
		raw += r.rawCPU[k]
		fed += r.fedCPU[k]
	}
	lines = append(lines, fmt.Sprintf("all | %.2f | %.2f", raw, fed))
	return strings.Join(lines, "\n")
}

func (r realResult) String() string {
	return fmt.Sprintf("| %d x %d | %.0f | %.0f | %.0f%% | %s | %s | %s |", r.n, len(memberNames), r.rawRate(), r.fedRate(),
		100*r.fedRate()/r.rawRate(), r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.maxLat.Round(time.Millisecond))
}

const realHeader = "| objects x members | raw objects/s | federated objects/s | ratio | p50 latency | p99 latency | max latency |"

// createWorkers is how many requests at once the test sends to one server: the same for the raw
// creates and for the federated objects' creates.
const createWorkers = 8

// runReal measures, on the same servers in the same run, the raw create rate of n ConfigMaps in
// every member (the test's unthrottled clients, createWorkers per member, all members at once)
// and the propagation of n FederatedConfigMaps created on the host (createWorkers at once) by
// the running control plane: objects per second and the latency of each, from just before its
// create to its appearance, through watches, in the last member.
func runReal(t *testing.T, f *realFleet, n int) realResult {
	t.Helper()
	ctx := context.Background()
	stamp := time.Now().Format("150405")
	res := realResult{n: n}

	rawNS := "scale-raw-" + stamp
	for _, m := range memberNames {
		f.createNamespace(t, f.members[m], rawNS)
	}
	cpu0 := sampleCPU()
	begin := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(memberNames))
	for k, m := range memberNames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = parallel(n, createWorkers, func(i int) error {
				_, err := f.members[m].Create(ctx, configMaps, memberConfigMap(rawNS, objectName(i)))
				return err
			})
		}()
	}
	wg.Wait()
	res.raw = time.Since(begin)
	res.rawCPU = cpuPerObject(cpu0, sampleCPU(), n)
	for _, err := range errs {
		require.NoError(t, err)
	}

	fedNS := "scale-fed-" + stamp
	res.ns = fedNS
	f.createNamespace(t, f.host, fedNS)
	w := f.watchMembers(t, fedNS)
	created := make([]time.Time, n)
	f.markWrites(t)
	stopProfile := startCPUProfile(t)
	cpu0 = sampleCPU()
	begin = time.Now()
	require.NoError(t, parallel(n, createWorkers, func(i int) error {
		created[i] = time.Now()
		_, err := f.host.Create(ctx, fedConfigMaps, federatedConfigMap(fedNS, objectName(i), "1"))
		return err
	}))
	require.Eventually(t, func() bool { return w.complete() == n }, 10*time.Minute, 20*time.Millisecond,
		"every FederatedConfigMap in every member")
	res.fedCPU = cpuPerObject(cpu0, sampleCPU(), n)
	stopProfile()
	lat := make([]time.Duration, n)
	var end time.Time
	for i := range n {
		last := w.last(objectName(i))
		lat[i] = last.Sub(created[i])
		if last.After(end) {
			end = last
		}
	}
	w.stop()
	res.fed = end.Sub(begin)
	slices.Sort(lat)
	res.p50, res.p99, res.maxLat = lat[n/2], lat[min(n-1, n*99/100)], lat[n-1]
	return res
}

// memberConfigMap is what sync writes for federatedConfigMap, less fedkit's labels.
func memberConfigMap(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"data":     map[string]any{"version": "1", "app.properties": "color=blue\nsize=large\n"},
	}}
}

// TestRealBounded propagates 100 FederatedConfigMaps to three real members with production
// defaults and logs the figures next to the raw create rate. It asserts propagation and the
// host writes per new object (checkWrites), not rates: rates on a shared 2-core machine vary
// too much for a bound in CI.
func TestRealBounded(t *testing.T) {
	t.Parallel()
	f := startReal(t, controlplane.Options{})
	r := runReal(t, f, 100)
	t.Log(realHeader)
	t.Log(r)
	t.Log("\n" + summarize(t, f.gatherer(t)))
	f.converged(t, r.ns, 100)
	t.Log("\n" + f.events(t, r.ns, 100))
	t.Log("\n" + f.hostTable(t, 100))
	f.checkWrites(t, 100, boundedWritesPerObject)
}

// TestRealScale propagates -scale.real objects.
func TestRealScale(t *testing.T) {
	if *realFlag <= 0 {
		t.Skip("no -scale.real (make scale runs it)")
	}
	f := startReal(t, controlplane.Options{})
	r := runReal(t, f, *realFlag)
	t.Log("\n" + realHeader + "\n|---|---|---|---|---|---|---|\n" + r.String())
	t.Log("\n" + summarize(t, f.gatherer(t)))
	t.Log("\n" + r.cpu())
	f.converged(t, r.ns, *realFlag)
	t.Log("\n" + f.events(t, r.ns, *realFlag))
	t.Log("\n" + f.hostTable(t, *realFlag))
	f.checkWrites(t, *realFlag, maxWritesPerObject)
}
