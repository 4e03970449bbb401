package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

var (
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	leases     = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	fedCMs     = federation.ConfigMapType.FederatedGVR()
	// runs numbers the namespaces and Leases of each test run: -count=N reuses the servers.
	runs atomic.Int64
)

// setup returns the shared servers with every CRD of fedkit on the host (config/crd's), the
// namespace fedkit-system, and the members registered as `kubectl fed join` registers them
// (a Cluster and its Secret, the member's admin token).
func setup(t *testing.T) (*testenv.Env, *kube.Client) {
	t.Helper()
	env := testenv.Shared(t)
	host := env.Client(t, hostName)
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	if err != nil {
		t.Fatal(err)
	}
	dns, err := dnsrecord.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := conformance.InstallCRDs(ctx, host, append(crds, dns...)...); err != nil {
		t.Fatal(err)
	}
	fedtest.Create(t, host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`)
	for _, m := range memberNames {
		env.Register(t, host, m, m, "fedkit-system")
	}
	return env, host
}

// kubeconfig writes the environment's kubeconfig (a context per server, admin tokens), with
// the host's server replaced by hostServer when it is not empty.
func kubeconfig(t *testing.T, env *testenv.Env, hostServer string) string {
	t.Helper()
	data, err := env.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if hostServer != "" {
		kc.Clusters[hostName].Server = hostServer
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// federate creates the namespace ns and a FederatedConfigMap ns/name placed in every Ready
// cluster, and waits until every member has the ConfigMap.
func federate(t *testing.T, env *testenv.Env, host *kube.Client, ns, name string) {
	t.Helper()
	fedtest.Create(t, host, namespaces, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, ns))
	fedtest.Create(t, host, fedCMs, fmt.Sprintf(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: %s, namespace: %s}
spec:
  template: {data: {greeting: hello}}
  placement: {clusterSelector: {}}
`, name, ns))
	for _, m := range memberNames {
		member := env.Client(t, m)
		fedtest.Eventually(t, m+" has the ConfigMap "+ns+"/"+name, func() bool {
			_, err := member.Get(context.Background(), configMaps, ns, name)
			return err == nil
		})
	}
}

// gate is a TCP proxy to an API server that holds every connection until it is opened: a
// host the process cannot list from yet. Once open, cut partitions it (every connection
// closed, new ones refused) until heal.
type gate struct {
	ln      net.Listener
	target  string
	open    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
	stopped bool
	down    atomic.Bool
}

// cut closes every connection through the gate and refuses new ones until heal.
func (g *gate) cut() {
	g.down.Store(true)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		_ = c.Close()
	}
	g.conns = nil
}

// heal lets new connections through again.
func (g *gate) heal() { g.down.Store(false) }

func newGate(t *testing.T, server string) *gate {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln, target: u.Host, open: make(chan struct{})}
	g.wg.Go(g.serve)
	t.Cleanup(g.stop)
	return g
}

// server is the gate's URL, in place of the API server's.
func (g *gate) server() string { return "https://" + g.ln.Addr().String() }

// release lets every connection, held and new, through to the API server.
func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		if !g.track(c) {
			return
		}
		g.wg.Go(func() { g.forward(c) })
	}
}

// track remembers c so that stop closes it; false once the gate has stopped.
func (g *gate) track(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		_ = c.Close()
		return false
	}
	g.conns = append(g.conns, c)
	return true
}

func (g *gate) forward(c net.Conn) {
	<-g.open
	if g.down.Load() {
		_ = c.Close()
		return
	}
	s, err := net.Dial("tcp", g.target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !g.track(s) {
		_ = c.Close()
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(s, c); _ = s.Close() })
	_, _ = io.Copy(c, s)
	_ = c.Close()
	wg.Wait()
}

func (g *gate) stop() {
	g.mu.Lock()
	g.stopped = true
	for _, c := range g.conns {
		_ = c.Close()
	}
	g.mu.Unlock()
	_ = g.ln.Close()
	g.release()
	g.wg.Wait()
}

// metricsDoc are the families METRICS.md lists.
func metricsDoc(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "METRICS.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	if len(out) == 0 {
		t.Fatal("METRICS.md lists no metric")
	}
	return out
}

// fedkit-controller-manager as a separate process against real API servers: while it
// cannot list from the host its /readyz says not ready (and /healthz ok); once it can, it
// turns ready; a FederatedConfigMap propagates, and /metrics shows sync's counters move
// (passes, member creates, propagation lag, and its queue's adds and reconciles in
// controller-runtime's families). Every family it serves but Go's and the process's is one
// METRICS.md lists; pprof answers when asked for; SIGTERM stops it with exit status 0.
func TestControllerManagerProcess(t *testing.T) {
	env, host := setup(t)
	run := runs.Add(1)
	g := newGate(t, env.Config(hostName).Host)
	p := managertest.Start(t, managertest.Options{Args: []string{
		"--kubeconfig", kubeconfig(t, env, g.server()), "--host-context", hostName, "--leader-elect=false",
		"--types=FederatedConfigMap", "--pprof-bind-address=127.0.0.1:0",
	}})

	code, body := p.Readyz()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "controlplane: not ready") {
		t.Fatalf("/readyz while the host cannot be listed: %d %q; want 503 controlplane: not ready", code, body)
	}
	if code, body := managertest.Get(p.Probes, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d %q; want 200", code, body)
	}
	g.release()
	p.WaitReady(t)
	before := p.Scrape(t)

	ns := fmt.Sprintf("deploy-%d", run)
	federate(t, env, host, ns, "hello")
	sync := map[string]string{"loop": "sync", "type": "FederatedConfigMap"}
	queue := "sync/FederatedConfigMap"
	var after map[string]float64
	fedtest.Eventually(t, "sync's counters moved in /metrics", func() bool {
		now := p.Scrape(t)
		moved := func(family string, labels map[string]string) float64 {
			return fedtest.Sum(t, now, family, labels) - fedtest.Sum(t, before, family, labels)
		}
		after = map[string]float64{
			"passes":     moved("fedkit_reconciles_total", sync),
			"creates":    moved("fedkit_member_requests_total", map[string]string{"loop": "sync", "verb": "create", "result": "ok"}),
			"lag":        moved("fedkit_propagation_lag_seconds", map[string]string{"type": "FederatedConfigMap"}),
			"adds":       moved("workqueue_adds_total", map[string]string{"name": queue, "controller": queue}),
			"reconciles": moved("controller_runtime_reconcile_total", map[string]string{"controller": queue}),
		}
		return after["passes"] >= 1 && after["creates"] >= float64(len(memberNames)) && after["lag"] >= 1 &&
			after["adds"] >= 1 && after["reconciles"] >= 1
	})
	t.Logf("sync's counters moved by %v", after)

	// kubectl fed clusters shows what the process's monitor saw.
	kc := kubeconfig(t, env, "")
	clusters := kubectlFed(t, "clusters", "--kubeconfig", kc, "--context", hostName)
	for _, m := range memberNames {
		if !regexp.MustCompile(`(?m)^` + m + `\s+True\s+-\s+.*\sv1\.`).MatchString(clusters) {
			t.Errorf("kubectl fed clusters does not show %s Ready with its version:\n%s", m, clusters)
		}
	}

	documented := metricsDoc(t)
	mfs, err := p.Scrape(t).Gather()
	if err != nil {
		t.Fatal(err)
	}
	families := map[string]bool{}
	for _, mf := range mfs {
		families[mf.GetName()] = true
	}
	for name := range families {
		if !documented[name] && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("/metrics serves %s, which METRICS.md does not list", name)
		}
	}
	for _, name := range []string{"fedkit_reconciles_total", "fedkit_reconcile_duration_seconds", "fedkit_member_requests_total",
		"fedkit_propagation_lag_seconds", "fedkit_cluster_ready", "workqueue_adds_total", "workqueue_depth",
		"workqueue_queue_duration_seconds", "controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds",
		"controller_runtime_active_workers", "controller_runtime_max_concurrent_reconciles",
		"go_goroutines", "process_cpu_seconds_total", "rest_client_requests_total"} {
		if !families[name] {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	if code, _ := managertest.Get(p.Address("Serving pprof"), "/debug/pprof/"); code != http.StatusOK {
		t.Errorf("GET /debug/pprof/: %d; want 200", code)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.Logs())
	}
	if !p.Logged("Stopped") {
		t.Errorf("no graceful stop in the log:\n%s", p.Logs())
	}
}

// holder is the Lease's holder and its controlplane-version annotation.
func holder(t *testing.T, host *kube.Client, ns, name string) (who, version string) {
	t.Helper()
	u, err := host.Get(context.Background(), leases, ns, name)
	if err != nil {
		return "", ""
	}
	who, _, _ = unstructured.NestedString(u.Object, "spec", "holderIdentity")
	return who, u.GetAnnotations()[federation.ControlPlaneVersionAnnotation]
}

// Two processes with leader election (its default): both are ready (one leads, the other
// stands by), leader_election_master_status says which, and the leader's Lease carries its
// version. SIGTERM stops the leader, which releases the Lease at once: the standby leads well
// before the Lease (a minute) could have expired.
func TestControllerManagerLeaderElection(t *testing.T) {
	env, host := setup(t)
	lease := fmt.Sprintf("deploy-le-%d", runs.Add(1))
	kc := kubeconfig(t, env, "")
	start := func() *managertest.Process {
		return managertest.Start(t, managertest.Options{Args: []string{
			"--kubeconfig", kc, "--host-context", hostName, "--types=FederatedConfigMap", "--controllers=*,-dns",
			"--leader-elect-resource-name=" + lease, "--leader-elect-lease-duration=60s", "--leader-elect-retry-period=500ms",
		}})
	}
	a, b := start(), start()
	a.WaitReady(t)
	b.WaitReady(t)
	leading := func(p *managertest.Process) float64 {
		return fedtest.Sum(t, p.Scrape(t), "leader_election_master_status", map[string]string{"name": lease})
	}
	var leader, standby *managertest.Process
	fedtest.Eventually(t, "one process leads, the other stands by", func() bool {
		switch la, lb := leading(a), leading(b); {
		case la == 1 && lb == 0:
			leader, standby = a, b
		case la == 0 && lb == 1:
			leader, standby = b, a
		}
		return leader != nil
	})
	who, annotated := holder(t, host, "fedkit-system", lease)
	if who == "" || annotated != managertest.Version {
		t.Fatalf("Lease fedkit-system/%s held by %q with version %q; want a holder with %q", lease, who, annotated, managertest.Version)
	}

	version := kubectlFed(t, "version", "--kubeconfig", kc, "--context", hostName)
	if !strings.Contains(version, "Control plane version: "+managertest.Version) || !regexp.MustCompile(`fedkit-system/`+lease+`\s+`+regexp.QuoteMeta(who)+`\s+`+regexp.QuoteMeta(managertest.Version)).MatchString(version) {
		t.Errorf("kubectl fed version does not show the leader's version and Lease:\n%s", version)
	}

	if err := leader.Stop(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, leader.Logs())
	}
	fedtest.Eventually(t, "the standby leads: the Lease was released", func() bool { return leading(standby) == 1 })
	if next, _ := holder(t, host, "fedkit-system", lease); next == who || next == "" {
		t.Errorf("Lease fedkit-system/%s held by %q after %q stopped; want the standby", lease, next, who)
	}
	standby.WaitReady(t)
}

// kubectlFed runs `kubectl fed args...` (the plugin built from this checkout, as a process)
// and returns its output; it fails the test unless it exits 0.
func kubectlFed(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, managertest.Plugin(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = []string{"HOME=" + t.TempDir()} // no KUBECONFIG or ~/.kube/config of the test's
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl fed %q: %v\n%s%s", args, err, out.String(), errOut.String())
	}
	return out.String()
}

// The Cluster CRD's printer columns: kubectl get clusters shows readiness, region and
// version, and -o wide adds the reason, zones, taints, CPU and memory, as the API server
// serves them in its Table.
func TestClusterPrinterColumns(t *testing.T) {
	env, _ := setup(t)
	cfg := env.Config(hostName)
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, cfg.Host+"/apis/core.federation.k8s.io/v1alpha1/clusters", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var table metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&table); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, col := range table.ColumnDefinitions {
		got = append(got, fmt.Sprintf("%s/%d", col.Name, col.Priority))
	}
	want := []string{"Name/0", "Ready/0", "Reason/1", "Region/0", "Zones/1", "Version/0", "Taints/1", "CPU/1", "Memory/1", "Age/0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the Cluster Table's columns (name/priority; 1: -o wide) (-want +got):\n%s", diff)
	}
	for _, m := range memberNames {
		found := false
		for _, row := range table.Rows {
			found = found || (len(row.Cells) > 0 && row.Cells[0] == m)
		}
		if !found {
			t.Errorf("no row for the Cluster %s in %v", m, table.Rows)
		}
	}
}
