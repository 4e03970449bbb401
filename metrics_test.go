package fedkit_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

var update = flag.Bool("update", false, "rewrite testdata/metrics.txt and the table of METRICS.md from the loops' metrics")

// recordingRegisterer is a registry that remembers every collector registered into it.
type recordingRegisterer struct {
	*prometheus.Registry
	mu         sync.Mutex
	collectors []prometheus.Collector
}

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	err := r.Registry.Register(c)
	if err == nil {
		r.mu.Lock()
		r.collectors = append(r.collectors, c)
		r.mu.Unlock()
	}
	return err
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// metric is one family a loop registers.
type metric struct {
	name, typ, help string
	labels          []string
}

// TestMetrics lists every metric family the loops register (their constructors, and Run for
// the work queues), checks them against Prometheus' conventions and the project's own
// (fedkit_ prefix, shared label names, _total counters, _seconds for durations), and
// compares the list with testdata/metrics.txt and the table in METRICS.md: a metric added,
// renamed or relabelled without updating the documentation fails here. Refresh both with
// go test . -run TestMetrics -update.
func TestMetrics(t *testing.T) {
	reg := &recordingRegisterer{Registry: prometheus.NewPedanticRegistry()}
	startEveryLoop(t, reg)
	metrics := describe(t, reg)

	for _, m := range metrics {
		checkConventions(t, m)
	}
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}

	var list strings.Builder
	for _, m := range metrics {
		fmt.Fprintf(&list, "%s %s {%s}\n", m.name, m.typ, strings.Join(m.labels, ","))
	}
	golden(t, "testdata/metrics.txt", list.String())
	doc, err := os.ReadFile("METRICS.md")
	require.NoError(t, err)
	want := withTable(t, string(doc), table(metrics))
	if *update {
		require.NoError(t, os.WriteFile("METRICS.md", []byte(want), 0o644))
	} else if want != string(doc) {
		t.Errorf("METRICS.md's table differs from the loops' metrics; run go test . -run TestMetrics -update")
	}
}

// startEveryLoop builds every loop on a fake host with reg, and runs each just long enough
// for it to register its work queue's metrics (its clock never moves: nothing else happens).
func startEveryLoop(t *testing.T, reg prometheus.Registerer) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	host, fleet := fake.NewHost("host"), fake.NewFleet()
	typ := federation.DeploymentType
	s, err := scheduler.New(host, typ, scheduler.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	y, err := fedsync.New(host, fleet, typ, fedsync.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	c, err := status.New(host, fleet, typ, status.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	m, err := status.NewClusterMonitor(host, fleet, status.MonitorOptions{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	d, err := dnsrecord.New(host, fleet, dnsrecord.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	p, err := propagation.New(host, []federation.TypeConfig{typ}, propagation.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{s.Run, y.Run, c.Run, m.Run, d.Run, p.Run} {
		wg.Go(func() { _ = run(ctx) })
	}
	queues := []string{"scheduler/FederatedDeployment", "sync/FederatedDeployment", "sync/FederatedDeployment/clusters",
		"status/FederatedDeployment", "cluster-monitor", "dnsrecord", "propagation/FederatedDeployment"}
	require.Eventually(t, func() bool {
		mfs, err := reg.(prometheus.Gatherer).Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "fedkit_workqueue_depth" {
				return len(mf.GetMetric()) == len(queues)
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "every loop's Run names its work queue")
	cancel()
	wg.Wait()
}

var variableLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)

// describe returns the families of every collector registered, sorted by name. It gives
// each labelled family one series (labels "x") so that gathering shows its type and help.
func describe(t *testing.T, reg *recordingRegisterer) []metric {
	for _, c := range reg.collectors {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			names := strings.Split(variableLabels.FindStringSubmatch(d.String())[1], ",")
			values := make([]string, len(names))
			for i := range values {
				values[i] = "x"
			}
			switch v := c.(type) {
			case *prometheus.CounterVec:
				v.WithLabelValues(values...)
			case *prometheus.GaugeVec:
				v.WithLabelValues(values...)
			case *prometheus.HistogramVec:
				v.WithLabelValues(values...)
			case interface { // a family that wraps a GaugeVec (status' summed stale members)
				WithLabelValues(...string) prometheus.Gauge
			}:
				v.WithLabelValues(values...)
			}
		}
	}
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var out []metric
	for _, mf := range mfs {
		m := metric{name: mf.GetName(), typ: strings.ToLower(mf.GetType().String()), help: mf.GetHelp()}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			m.labels = append(m.labels, l.GetName())
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b metric) int { return strings.Compare(a.name, b.name) })
	return out
}

// sharedLabels are the label names the loops use; a family with any other is a typo or a
// new dimension that must be added on purpose.
var sharedLabels = []string{"loop", "type", "outcome", "cluster", "verb", "result", "name"}

func checkConventions(t *testing.T, m metric) {
	t.Helper()
	if !strings.HasPrefix(m.name, "fedkit_") {
		t.Errorf("%s: not prefixed fedkit_", m.name)
	}
	switch m.typ {
	case "counter":
		if !strings.HasSuffix(m.name, "_total") {
			t.Errorf("%s: a counter's name ends in _total", m.name)
		}
	case "histogram", "gauge":
		if strings.HasSuffix(m.name, "_total") {
			t.Errorf("%s: only counters end in _total", m.name)
		}
	default:
		t.Errorf("%s: unexpected type %s", m.name, m.typ)
	}
	if m.typ == "histogram" && !strings.HasSuffix(m.name, "_seconds") {
		t.Errorf("%s: fedkit's histograms are durations, in seconds", m.name)
	}
	for _, bad := range []string{"_milliseconds", "_ms", "_minutes", "_count", "_sum", "_bucket"} {
		if strings.Contains(m.name, bad) {
			t.Errorf("%s: use base units and leave %s to Prometheus", m.name, bad)
		}
	}
	for _, l := range m.labels {
		if !slices.Contains(sharedLabels, l) {
			t.Errorf("%s: label %q is none of %v", m.name, l, sharedLabels)
		}
	}
	if m.help == "" {
		t.Errorf("%s: no help", m.name)
	}
}

const (
	tableBegin = "<!-- BEGIN METRICS TABLE: generated by go test . -run TestMetrics -update -->"
	tableEnd   = "<!-- END METRICS TABLE -->"
)

func table(metrics []metric) string {
	var b strings.Builder
	b.WriteString("| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, m := range metrics {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.name, m.typ, strings.Join(m.labels, ", "), strings.ReplaceAll(m.help, "|", `\|`))
	}
	return b.String()
}

// withTable returns doc with the text between its table markers replaced by tbl.
func withTable(t *testing.T, doc, tbl string) string {
	t.Helper()
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	require.True(t, i >= 0 && j > i, "METRICS.md lacks the table markers %q and %q", tableBegin, tableEnd)
	return doc[:i+len(tableBegin)] + "\n" + tbl + doc[j:]
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test . -run TestMetrics -update")
	if string(want) != got {
		t.Errorf("%s differs from the loops' metrics (run go test . -run TestMetrics -update and update METRICS.md):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
