package controlplane_test

import (
	"bytes"
	"cmp"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fedkit/fedkit/controlplane"
)

// An idle default control plane (every built-in type) holds no pool of member writers per
// type and no idle loop workers: both start with work and exit once idle. The test log
// shows what holds the goroutines, by function. The count is taken after one
// object was propagated (the writers worked once) and the fake clock stepped past their idle
// period.
func TestIdleControlPlaneGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newEnv(t)
	opts := e.options() // nil Types: every built-in type, as by default
	opts.Registerer = prometheus.NewRegistry()
	before := runtime.NumGoroutine()
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()

	stepUntil(t, e.clock, time.Second, "every loop running", func() bool {
		for _, l := range cp.Status() {
			if l.State != controlplane.StateRunning && l.Name != controlplane.DNSLoop {
				return false
			}
		}
		return len(cp.Status()) > 0
	})
	create(t, e.host, deployments, federatedDeployment("web"))
	stepUntil(t, e.clock, time.Second, "propagated to both members", func() bool {
		return e.memberReplicas("eu", "web") == 4 && e.memberReplicas("us", "web") == 4
	})
	// Without writers, with one host informer per resource and with loop workers started on
	// demand, what is left (measured 479 with -race on 2026-12-02, before the propagation
	// loops) is the informers' event handlers (two goroutines each: about 200), each loop's
	// queue (its feeder, delaying queue and metrics: about 135), the control plane's
	// supervisors (35) and the informers (eight each: the host's one per resource and the
	// members' caches). The propagation loops add a queue and the informer of its native
	// objects per namespaced type (measured 631 with them and the dependencies loop, alone;
	// up to 764 in the whole package's run, with other tests' goroutines still exiting).
	// Each loop's idle workers took 367 more (800); with 256 idle writers per type and each
	// loop's own host informers it was over 4,000.
	const most = 850
	var held int
	stepUntilf(t, e.clock, time.Minute, func() string {
		return "an idle control plane holds " + strconv.Itoa(held) + " goroutines more than before it ran, want at most " + strconv.Itoa(most)
	}, func() bool {
		held = runtime.NumGoroutine() - before
		return held <= most
	})
	t.Logf("an idle control plane holds %d goroutines; by creator:\n%s", held, goroutinesByCreator())
}

// goroutinesByCreator returns how many goroutines run each function, most first, one line
// each ("  118 k8s.io/client-go/tools/cache.(*processorListener).run"), from a goroutine
// profile: a goroutine's function is the first of its stack that is not a starter's wrapper
// (sync.WaitGroup.Go, errgroup, wait.Group).
func goroutinesByCreator() string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		return err.Error()
	}
	count := map[string]int{}
	for _, g := range strings.Split(buf.String(), "\n\n") {
		var funcs []string // innermost first
		for _, line := range strings.Split(g, "\n") {
			if line == "" || strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "goroutine ") || strings.HasPrefix(line, "created by ") {
				continue
			}
			fn := line
			if i := strings.LastIndex(fn, "("); i > 0 && strings.HasSuffix(fn, ")") {
				fn = fn[:i]
			}
			funcs = append(funcs, fn)
		}
		entry := "?"
		for i := len(funcs) - 1; i >= 0; i-- {
			entry = funcs[i]
			if !strings.HasPrefix(entry, "sync.(*WaitGroup).Go") && !strings.HasPrefix(entry, "golang.org/x/sync/errgroup.") &&
				!strings.HasPrefix(entry, "k8s.io/apimachinery/pkg/util/wait.(*Group).Start") {
				break
			}
		}
		count[entry]++
	}
	type row struct {
		entry string
		n     int
	}
	rows := make([]row, 0, len(count))
	for c, n := range count {
		rows = append(rows, row{c, n})
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(b.n-a.n, strings.Compare(a.entry, b.entry)) })
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%5d %s\n", r.n, r.entry)
	}
	return b.String()
}
