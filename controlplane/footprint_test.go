package controlplane_test

import (
	"bytes"
	"cmp"
	"context"
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
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// hostWrites returns the host writes among actions, one line each ("patch
// types.federation.k8s.io/v1alpha1/federatedconfigmaps default/a"), but the Clusters' status
// (the monitor's heartbeats), which belongs to no federated object.
func hostWrites(actions []fake.Action) []string {
	var out []string
	for _, a := range actions {
		switch a.Verb {
		case fake.VerbCreate, fake.VerbUpdate, fake.VerbUpdateStatus, fake.VerbPatch, fake.VerbDelete:
		default:
			continue
		}
		if a.Resource == federation.ClusterGVR || a.Resource == leasesGVR {
			continue
		}
		out = append(out, a.String())
	}
	slices.Sort(out)
	return out
}

func federatedConfigMap(name string) string {
	return fmt.Sprintf(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap,
metadata: {name: %s, namespace: default},
spec: {template: {data: {a: b}}, placement: {clusters: [{name: eu}, {name: us}]}}}`, name)
}

// A new federated object costs the host at most three writes besides the user's create,
// Events included, with a default control plane: sync's one metadata patch (finalizer and
// revision annotation), its ControllerRevision, and one status write that holds the
// scheduler's, sync's and the collector's fields. The Normal events of its first rollout
// (CreatedInCluster, ScheduleChanged, Ready) are not written: its conditions say the same.
// A change to it afterwards is an event again. A steady object costs no write.
//
// So it is with leader election, as fedkit-controller-manager runs by default: the shared
// status writer runs while the replica leads.
func TestNewObjectHostWrites(t *testing.T) {
	t.Run("single", func(t *testing.T) { newObjectHostWrites(t, nil) })
	t.Run("leader election", func(t *testing.T) {
		// Renewals every 10s of real time: the test waits for a quiet host between steps.
		newObjectHostWrites(t, &controlplane.Lease{Namespace: "default", LeaseDuration: time.Minute, RenewDeadline: 40 * time.Second, RetryPeriod: 10 * time.Second})
	})
}

func newObjectHostWrites(t *testing.T, lease *controlplane.Lease) {
	e := newEnv(t)
	opts := e.options(federation.ConfigMapType)
	opts.Disable.DNS = true
	opts.LeaderElection = lease
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	cp, err := controlplane.New(e.host, e.fleet, opts)
	require.NoError(t, err)
	stop := run(cp)
	defer func() { require.NoError(t, stop()) }()
	stepUntil(t, e.clock, time.Second, "both clusters Ready", func() bool {
		for _, name := range []string{"eu", "us"} {
			u, err := e.host.Peek(federation.ClusterGVR, "", name)
			if err != nil {
				return false
			}
			c, err := federation.ClusterFromUnstructured(u)
			if err != nil || !meta.IsStatusConditionTrue(c.Status.Conditions, federation.ConditionReady) {
				return false
			}
		}
		return true
	})
	gvr := federation.ConfigMapType.FederatedGVR()
	e.host.ClearActions()
	create(t, e.host, gvr, federatedConfigMap("cfg"))
	// Steps of 100ms, each once the host has been quiet: the loops act within the status
	// window as they would in real time.
	stepQuiet(t, e, "Scheduled, Propagated and Ready", func() bool {
		return e.condition(gvr, "cfg", "Scheduled") == "True" && e.condition(gvr, "cfg", "Propagated") == "True" &&
			e.condition(gvr, "cfg", "Ready") == "True"
	})
	// Two event windows: what was gathered is written at each one's end (the broadcaster
	// writes in real time, so each step waits for the host to be quiet).
	stepQuietFor(e, 2*controlplane.DefaultEventWindow)

	var writes []string
	events := 0
	for _, w := range hostWrites(e.host.Actions()) {
		switch {
		case strings.HasPrefix(w, "create types.federation.k8s.io/v1alpha1/federatedconfigmaps"):
			// the user's create
		case strings.Contains(w, " v1/events "):
			events++
			writes = append(writes, w)
		default:
			writes = append(writes, w)
		}
	}
	if len(writes) > 3 {
		t.Errorf("%d host writes for one new object, %d of them Events, want at most 3 in all:\n%s", len(writes), events, strings.Join(writes, "\n"))
	}
	t.Logf("host writes for one new object: %d, %d of them Events", len(writes), events)

	// Steady: a resync passes over the object and writes nothing.
	e.host.ClearActions()
	before := syncPasses(t, reg)
	stepUntil(t, e.clock, fedsync.DefaultResyncPeriod, "a resync pass of sync", func() bool { return syncPasses(t, reg) > before })
	for range 2 * controlplane.DefaultEventWindow / time.Second { // two event windows, in steps of 1s
		e.waitQuiet()
		e.clock.Step(time.Second)
	}
	e.waitQuiet()
	require.Empty(t, hostWrites(e.host.Actions()), "a steady object's host writes")

	// A change once it runs is an event: the new data updated in both clusters.
	_, err = e.host.Patch(context.Background(), gvr, "default", "cfg", types.MergePatchType, []byte(`{"spec":{"template":{"data":{"a":"c"}}}}`))
	require.NoError(t, err)
	stepUntilf(t, e.clock, time.Second, func() string {
		return fmt.Sprintf("an UpdatedInCluster event on cfg; events: %v", e.hostEvents(t))
	}, func() bool {
		for _, ev := range e.hostEvents(t) {
			if ev.Reason == plan.EventUpdatedInCluster && ev.InvolvedObject.Name == "cfg" {
				return true
			}
		}
		return false
	})
}

// stepQuiet steps the fake clock by 100ms until cond holds, each step once no host request
// came for 50ms of real time (bounded): the loops have done what the last step woke.
func stepQuiet(t *testing.T, e *env, what string, cond func() bool) {
	t.Helper()
	for range 600 {
		if cond() {
			return
		}
		e.waitQuiet()
		e.clock.Step(100 * time.Millisecond)
	}
	t.Fatalf("%s: not after 600 steps of 100ms", what)
}

// stepQuietFor steps the fake clock by d in steps of 100ms, each once the host is quiet.
func stepQuietFor(e *env, d time.Duration) {
	for range d / (100 * time.Millisecond) {
		e.waitQuiet()
		e.clock.Step(100 * time.Millisecond)
	}
}

// waitQuiet returns once no host request came for 50ms of real time, or after 500ms.
func (e *env) waitQuiet() {
	last, quiet := len(e.host.Actions()), 0
	for i := 0; i < 500 && quiet < 50; i++ {
		time.Sleep(time.Millisecond)
		if n := len(e.host.Actions()); n != last {
			last, quiet = n, 0
		} else {
			quiet++
		}
	}
}

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
	// Measured with -race on 2026-12-06: 408. What is left: the informers (six goroutines
	// each in client-go, one in the fake's watch: about 190 for some 27 informers, the host's
	// one per resource and the members' caches), two per work queue in client-go (its
	// delaying queue and, with metrics, its unfinished-work gauge: 120 for 60 queues), and
	// each loop's Run (49), which feeds its workers itself. The loops' handlers share one
	// client-go listener per informer (internal/loop's fanout): 172 handlers took 344
	// goroutines before (761 in all), and each Run's feeder 60 more. Each loop's idle workers
	// took 367 more before that (800 in an earlier count); with 256 idle writers per type and
	// each loop's own host informers it was over 4,000.
	const most = 450
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

// syncPasses is how many passes sync has made over federated objects, as reg counts them.
func syncPasses(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	return fedtest.Sum(t, reg, "fedkit_reconciles_total", map[string]string{"loop": "sync"})
}
