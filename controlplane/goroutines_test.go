package controlplane_test

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fedkit/fedkit/controlplane"
)

// An idle default control plane (every built-in type) holds no pool of member writers per
// type: sync's writers start with work and exit once idle. The count is taken after one
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
	// Without writers and with one host informer per resource, what is left is the loops'
	// queues and workers (about 450) and the informers' goroutines (eight each: the host's
	// one per resource and the members' caches of every built-in type on two members): about
	// 800. With 256 idle writers per type and each loop's own host informers it was over 4,000.
	// The propagation loops add about 100 (per namespaced type: a queue, a worker and the
	// informer of its native objects).
	const most = 1100
	var held int
	stepUntilf(t, e.clock, time.Minute, func() string {
		return "an idle control plane holds " + strconv.Itoa(held) + " goroutines more than before it ran, want at most " + strconv.Itoa(most)
	}, func() bool {
		held = runtime.NumGoroutine() - before
		return held <= most
	})
}
