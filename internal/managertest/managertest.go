// Package managertest runs fedkit-controller-manager as a separate process for tests: the
// binary a deployment runs, built once per test binary, with its endpoints found in its log
// and its metrics scraped over HTTP. [Plugin] builds the kubectl plugin the same way, and
// Options.Agent runs the pull-mode agent, fedkit-agent, instead.
//
//	func TestMain(m *testing.M) {
//		code := testenv.Main(m, "host", "m1")
//		managertest.Cleanup()
//		os.Exit(code)
//	}
//
//	p := managertest.Start(t, managertest.Options{Args: []string{"--kubeconfig", path, "--host-context", "host"}})
//	p.WaitReady(t)
//	passes := fedtest.Sum(t, p.Scrape(t), "fedkit_reconciles_total", nil)
//	require.NoError(t, p.Stop()) // SIGTERM; nil when it exits 0
//
// The endpoints listen on 127.0.0.1:0 (a free port the kernel picks, no race with other
// processes); the addresses are read from the process's JSON log, which Start asks for.
package managertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Package is the binary's package; Version is the version Binary links into it
// (-X main.version), which the process reports in --version, its log and its Leases.
// PluginPackage is the kubectl plugin's package, which Plugin builds.
const (
	Package       = "github.com/fedkit/fedkit/cmd/fedkit-controller-manager"
	PluginPackage = "github.com/fedkit/fedkit/cmd/kubectl-fed"
	AgentPackage  = "github.com/fedkit/fedkit/cmd/fedkit-agent"
	Version       = "v0.0.0-managertest"
)

// binary is a program of this checkout, built on first use.
type binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// built, plugin and agentBin are the binaries of this test process.
var built, plugin, agentBin binary

// build builds pkg into b as name with Version linked in, on the first call.
func (b *binary) build(t testing.TB, pkg, name string) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "managertest-")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, name)
		out, err := exec.Command("go", "build", "-o", b.path, "-ldflags", "-X main.version="+Version, pkg).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Binary returns the path of fedkit-controller-manager built from this checkout with
// Version linked in, building it on the first call (a few seconds with a warm build
// cache). Cleanup removes it.
func Binary(t testing.TB) string {
	t.Helper()
	return built.build(t, Package, "fedkit-controller-manager")
}

// Plugin returns the path of the kubectl plugin (kubectl-fed) built from this checkout with
// Version linked in, building it on the first call: a test runs `kubectl fed` as a user
// does, a program of its own (its logic is internal to cmd/kubectl-fed). Cleanup removes it.
func Plugin(t testing.TB) string {
	t.Helper()
	return plugin.build(t, PluginPackage, "kubectl-fed")
}

// Agent returns the path of fedkit-agent built from this checkout with Version linked in,
// building it on the first call. Cleanup removes it.
func Agent(t testing.TB) string {
	t.Helper()
	return agentBin.build(t, AgentPackage, "fedkit-agent")
}

// Cleanup removes the binaries Binary, Plugin and Agent built; call it from TestMain after
// the tests ran.
func Cleanup() {
	for _, b := range []*binary{&built, &plugin, &agentBin} {
		if b.dir != "" {
			_ = os.RemoveAll(b.dir)
		}
	}
}

// Options configure a process.
type Options struct {
	// Args are the flags. Start adds --metrics-bind-address, --health-probe-bind-address
	// (127.0.0.1:0) and --log-format=json after them, so they win over what Args says.
	Args []string
	// Env is the process's whole environment (nil: none at all, not even HOME, so neither
	// KUBECONFIG nor ~/.kube/config nor the in-cluster variables leak in from the test's).
	Env []string
	// Agent runs fedkit-agent instead of fedkit-controller-manager: it serves /healthz only,
	// so Start adds only --health-probe-bind-address and --log-format, and waits for it.
	Agent bool
}

// Process is fedkit-controller-manager (or fedkit-agent) running.
type Process struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error

	// Metrics and Probes are the addresses of /metrics and of /healthz and /readyz.
	Metrics, Probes string
}

// Start starts the binary with opts and waits until it serves its endpoints (or exits,
// which fails the test with its log). The test's end stops it (SIGKILL if SIGTERM did not
// end it within 30 seconds).
func Start(t testing.TB, opts Options) *Process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "controller-manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	program, args := Binary(t), append(append([]string{}, opts.Args...), "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0", "--log-format=json")
	if opts.Agent {
		program, args = Agent(t), append(append([]string{}, opts.Args...), "--health-probe-bind-address=127.0.0.1:0", "--log-format=json")
	}
	cmd := exec.Command(program, args...)
	cmd.Env = opts.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The kernel kills the child when the test binary dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatal(err)
	}
	_ = logFile.Close()
	p := &Process{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if err := p.Stop(); err != nil && !errors.Is(err, errStoppedBefore) {
			t.Logf("fedkit-controller-manager: %v", err)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for (p.Metrics == "" && !opts.Agent) || p.Probes == "" {
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("%s serves no endpoints (exited: %t):\n%s", filepath.Base(program), p.exited(), p.Logs())
		}
		time.Sleep(20 * time.Millisecond)
		p.Metrics, p.Probes = p.Address("Serving metrics"), p.Address("Serving health probes")
	}
	return p
}

// Address is the "address" of the first log line whose message is msg ("Serving metrics",
// "Serving health probes", "Serving pprof"); "" when none.
func (p *Process) Address(msg string) string {
	for _, l := range p.lines() {
		if l["msg"] == msg {
			a, _ := l["address"].(string)
			return a
		}
	}
	return ""
}

// lines are the JSON lines of the log, decoded.
func (p *Process) lines() []map[string]any {
	f, err := os.Open(p.logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		var m map[string]any
		if json.Unmarshal(s.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Logs returns the process's log so far.
func (p *Process) Logs() string {
	data, _ := os.ReadFile(p.logPath)
	return string(data)
}

// Logged reports whether a log line has the message msg.
func (p *Process) Logged(msg string) bool {
	for _, l := range p.lines() {
		if l["msg"] == msg {
			return true
		}
	}
	return false
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

func (p *Process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Get requests path on addr and returns the status code and body; code 0 when the
// request failed.
func Get(addr, path string) (int, string) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Readyz is GET /readyz: its status code and body.
func (p *Process) Readyz() (int, string) { return Get(p.Probes, "/readyz") }

// WaitReady waits until /readyz answers 200 (at most two minutes), failing the test with
// the last answer and the log otherwise.
func (p *Process) WaitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body := p.Readyz()
		switch {
		case code == http.StatusOK:
			return
		case p.exited() || time.Now().After(deadline):
			t.Fatalf("fedkit-controller-manager not ready (exited: %t): /readyz %d %s\nlog:\n%s", p.exited(), code, body, p.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Scrape returns what /metrics serves now, as a Gatherer of that snapshot (fedtest.Sum adds
// up its series).
func (p *Process) Scrape(t testing.TB) prometheus.Gatherer {
	t.Helper()
	code, body := Get(p.Metrics, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	out := make([]*dto.MetricFamily, 0, len(mfs))
	for _, mf := range mfs {
		out = append(out, mf)
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return out, nil })
}

var errStoppedBefore = errors.New("stopped before")

// Stop sends SIGTERM and waits for the process to exit (SIGKILL after 30 seconds). It
// returns nil when the process exited 0, its exit error otherwise, and an error wrapping
// errStoppedBefore when it had exited already.
func (p *Process) Stop() error {
	if p.exited() {
		return fmt.Errorf("%w: %v", errStoppedBefore, p.waitErr)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("no exit within 30s of SIGTERM; killed\n%s", tail(p.Logs(), 20))
	}
	return p.waitErr
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := bytes.Split([]byte(strings.TrimRight(s, "\n")), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
