package status_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/status"
)

// stepUntil steps by d until cond holds, at most 100 steps.
func stepUntil(t testing.TB, step func(time.Duration), d time.Duration, what string, cond func() bool) {
	t.Helper()
	fedtest.StepUntil(t, step, d, 100, func() string { return what }, cond)
}

// run starts fn in the background and returns a func that stops it and requires nil.
func run(t testing.TB, fn func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// TestCollectorRun: Run collects a new object at once, reacts to a Cluster's readiness and to
// member changes, pulls every Period, reads the host only through its informers, and leaves
// no goroutine behind.
func TestCollectorRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newEnv(t, status.Options{})
	// The fleet itself, with its member caches and change notifications.
	c, err := status.New(e.host, e.fleet, federation.DeploymentType, status.Options{Clock: e.clock})
	require.NoError(t, err)
	e.host.ClearActions()
	stop := run(t, c.Run)
	defer func() {
		if stop != nil {
			stop()
		}
	}()

	e.federate(t, []string{"a", "b", "c"}, []int64{1, 2, 3})
	aggregated := func(want int64) func() bool {
		return func() bool {
			a := e.get(t).Status.Aggregated
			return a != nil && a.ReadyReplicas == want
		}
	}
	fedtest.Eventually(t, "the first collection", aggregated(6))

	// A Cluster turns not Ready: every object is collected again, and b's data is stale.
	e.setClusterReady(t, "b", false)
	fedtest.Eventually(t, "b stale", func() bool { return e.get(t).Status.Clusters[1].Stale })
	require.Equal(t, int64(4), e.get(t).Status.Aggregated.ReadyReplicas)

	// A member change is collected as soon as the member cache announces it, without
	// waiting for the period (the fake clock does not move).
	e.member(t, "c", 5)
	e.fleet.Tick()
	fedtest.Eventually(t, "the member change", aggregated(6))

	// b comes back: the Cluster's readiness requeues the object.
	e.setClusterReady(t, "b", true)
	fedtest.Eventually(t, "b fresh", aggregated(8))

	// Passes read the host through the informers: the only live reads are the re-reads
	// after a Conflict (a write based on an informer copy one write behind), each following a
	// failed status write.
	calls := map[fake.Verb]int{}
	for _, a := range e.host.Actions() {
		calls[a.Verb]++
		if a.Verb == fake.VerbGet && a.Resource != fedGVR {
			t.Errorf("a pass read the host: %s", a)
		}
	}
	if calls[fake.VerbList] != 2 {
		for _, a := range e.host.Actions() {
			t.Logf("%s %+v", a, a.ListOptions)
		}
	}
	require.Equal(t, 2, calls[fake.VerbList], "the informers' lists only: %v", calls)
	require.Less(t, calls[fake.VerbGet], calls[fake.VerbUpdateStatus], "live reads only after conflicts: %v", calls)
	stop()
	stop = nil
}

// TestCollectorRunPeriodicPull: without member caches (nothing announces changes), Run
// pulls every Period.
func TestCollectorRunPeriodicPull(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := newEnv(t, status.Options{})
	stop := run(t, e.c.Run)
	defer stop()
	e.federate(t, []string{"a", "b", "c"}, []int64{1, 2, 3})
	readyReplicas := func(want int64) func() bool {
		return func() bool {
			a := e.get(t).Status.Aggregated
			return a != nil && a.ReadyReplicas == want
		}
	}
	fedtest.Eventually(t, "the first collection", readyReplicas(6))
	e.member(t, "a", 4)
	e.fleet.Tick()
	stepUntil(t, e.clock.Step, federation.DefaultStatusPollInterval, "the periodic pull", readyReplicas(9))
}

// TestClusterMonitorRun: Run probes a new Cluster at once, then every Period; a partition
// turns it not Ready after three periods; a deleted Cluster is no longer probed.
func TestClusterMonitorRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	reg := prometheus.NewPedanticRegistry()
	e := newMonitorEnv(t, status.MonitorOptions{Registerer: reg}, "eu", "us")
	stop := run(t, e.m.Run)
	defer stop()
	member, _ := e.fleet.Member("us")
	probes := func() int {
		n := 0
		for _, a := range member.Actions() {
			if a.Verb == fake.VerbHealth {
				n++
			}
		}
		return n
	}
	fedtest.Eventually(t, "the first probes", func() bool {
		c := e.cluster(t, "us")
		return probes() == 1 && conditionOf(c, federation.ConditionOffline).Status == metav1.ConditionFalse
	})

	require.NoError(t, e.fleet.Partition("us"))
	stepUntil(t, e.clock.Step, status.DefaultProbePeriod, "us not Ready", func() bool {
		return conditionOf(e.cluster(t, "us"), federation.ConditionReady).Status == metav1.ConditionFalse
	})
	require.GreaterOrEqual(t, probes(), 4, "three failures in a row")
	require.Equal(t, status.ReasonClusterUnreachable, conditionOf(e.cluster(t, "us"), federation.ConditionReady).Reason)

	// A Cluster registered while Run runs is probed at once, without waiting for a period.
	ap := e.fleet.Add("ap", nil)
	require.NoError(t, e.fleet.Register(ctx, e.host))
	fedtest.Eventually(t, "the new Cluster's first probe", func() bool {
		for _, a := range ap.Actions() {
			if a.Verb == fake.VerbHealth {
				return true
			}
		}
		return false
	})

	// A deleted Cluster is probed no more, while the others are, period after period.
	require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", "us", metav1.DeleteOptions{}))
	eu, _ := e.fleet.Member("eu")
	euProbes := func() int {
		n := 0
		for _, a := range eu.Actions() {
			if a.Verb == fake.VerbHealth {
				n++
			}
		}
		return n
	}
	nextPeriod := func() {
		t.Helper()
		want := euProbes() + 1
		stepUntil(t, e.clock.Step, status.DefaultProbePeriod, "eu probed again", func() bool { return euProbes() >= want })
	}
	fedtest.Eventually(t, "a pass finding us gone", func() bool {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if mf.GetName() == "fedkit_reconciles_total" && slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
					return l.GetName() == "outcome" && l.GetValue() == "gone"
				}) {
					return true
				}
			}
		}
		return false
	})
	before := probes()
	for range 3 {
		nextPeriod()
	}
	require.Equal(t, before, probes(), "the deleted Cluster was probed again")
}
