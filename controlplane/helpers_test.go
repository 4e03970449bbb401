package controlplane_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

var (
	t0        = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// env is a fake host and a fleet of two members (eu, us) whose simulated controllers make
// Deployments ready, all on one fake clock.
type env struct {
	host  *fake.Cluster
	fleet *fake.Fleet
	clock *clocktesting.FakeClock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{host: fake.NewHost("host"), fleet: fake.NewFleet(), clock: clocktesting.NewFakeClock(t0)}
	e.host.SetClock(e.clock)
	e.fleet.SetClock(e.clock)
	e.fleet.SetWorkloads(fake.Workloads{Apps: true})
	e.fleet.Add("eu", nil)
	e.fleet.Add("us", nil)
	require.NoError(t, e.fleet.Register(context.Background(), e.host))
	return e
}

// options are a control plane's Options on the env's clock, for the given types, with short
// cache sync timeouts so a loop that cannot list fails after a few steps.
func (e *env) options(types ...federation.TypeConfig) controlplane.Options {
	o := controlplane.Options{Types: types, Clock: e.clock, RetryPeriod: 30 * time.Second}
	// The timeout runs on the fake clock, which the tests step while the informers list in
	// real time: it must outlast the steps a test makes before a loaded machine has listed
	// (with 5s, a few 1s steps failed every loop on a busy CI machine).
	const syncTimeout = 2 * time.Minute
	o.Scheduler.CacheSyncTimeout = syncTimeout
	o.Sync.CacheSyncTimeout = syncTimeout
	o.Status.CacheSyncTimeout = syncTimeout
	o.Monitor.CacheSyncTimeout = syncTimeout
	o.DNS.CacheSyncTimeout = syncTimeout
	return o
}

// run starts cp.Run and returns a func that stops it and returns Run's error.
func run(cp *controlplane.ControlPlane) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cp.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// stepUntil steps the fake clock by d until cond holds, giving the loops' goroutines up to
// 100ms of real time after each step to act on it.
func stepUntil(t testing.TB, clk *clocktesting.FakeClock, d time.Duration, what string, cond func() bool) {
	t.Helper()
	stepUntilf(t, clk, d, func() string { return what }, cond)
}

// stepUntilf is stepUntil with the failure's description built when it fails (to say what
// was seen last).
func stepUntilf(t testing.TB, clk *clocktesting.FakeClock, d time.Duration, what func() string, cond func() bool) {
	t.Helper()
	for range 200 {
		if cond() {
			return
		}
		clk.Step(d)
		tick := time.NewTicker(time.Millisecond)
		for range 100 {
			if cond() {
				break
			}
			<-tick.C
		}
		tick.Stop()
	}
	t.Fatalf("%s: not after 200 steps of %s", what(), d)
}

// states returns each loop's state by name.
func states(cp *controlplane.ControlPlane) map[string]controlplane.State {
	out := map[string]controlplane.State{}
	for _, l := range cp.Status() {
		out[l.Name] = l.State
	}
	return out
}

// loopStatus returns the named loop's status.
func loopStatus(t testing.TB, cp *controlplane.ControlPlane, name string) controlplane.LoopStatus {
	t.Helper()
	for _, l := range cp.Status() {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no loop %q in %v", name, states(cp))
	return controlplane.LoopStatus{}
}

func create(t testing.TB, c federation.ClusterClient, gvr schema.GroupVersionResource, doc string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	_, err := c.Create(context.Background(), gvr, u)
	require.NoError(t, err)
}

// federatedDeployment is default/<name>: 4 replicas in eu and in us (no preference divides them).
func federatedDeployment(name string) string {
	return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: ` + name + `, namespace: default}
spec:
  template:
    spec:
      replicas: 4
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27"}]}
  placement: {clusters: [{name: eu}, {name: us}]}
`
}

// memberReplicas returns the replicas of the Deployment default/name in cluster, -1 when absent.
func (e *env) memberReplicas(cluster, name string) int64 {
	m, _ := e.fleet.Member(cluster)
	u, err := m.Peek(federation.DeploymentType.TargetGVR(), "default", name)
	if err != nil {
		return -1
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n
}

// condition returns the status of the condition typ of the federated object, "" when absent.
func (e *env) condition(gvr schema.GroupVersionResource, name, typ string) string {
	u, err := e.host.Peek(gvr, "default", name)
	if err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// hostEvents returns the core/v1 Events on the host.
func (e *env) hostEvents(t testing.TB) []corev1.Event {
	t.Helper()
	var out []corev1.Event
	for _, u := range e.host.Objects(eventsGVR) {
		var ev corev1.Event
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ev))
		out = append(out, ev)
	}
	return out
}

// deleteCRD removes the CRD of t's federated type from the host, as `kubectl delete crd` would;
// the fake serves the resource no more once the CRD is gone.
func (e *env) deleteCRD(t testing.TB, typ federation.TypeConfig) {
	t.Helper()
	name := typ.FederatedResource + "." + typ.Federated.Group
	require.NoError(t, e.host.Delete(context.Background(), crdGVR, "", name, metav1.DeleteOptions{}))
}

// installCRD installs the CRD of t's federated type on the host.
func (e *env) installCRD(t testing.TB, typ federation.TypeConfig) {
	t.Helper()
	crd, err := federation.CRDFor(typ)
	require.NoError(t, err)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	_, err = e.host.Create(context.Background(), crdGVR, &unstructured.Unstructured{Object: m})
	require.NoError(t, err)
}

// logSink collects log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{})
}

// count returns how many lines contain every one of parts.
func (l *logSink) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
next:
	for _, line := range l.lines {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		n++
	}
	return n
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
