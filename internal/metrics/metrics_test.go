package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/metrics"
)

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "fedkit_test_total", Help: "test"}
	first, err := metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	require.NoError(t, err)
	second, err := metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	require.NoError(t, err)
	require.Same(t, first, second, "a second loop shares the first one's collector")

	_, err = metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"other"}))
	require.Error(t, err, "the same name with other labels is refused")

	c := prometheus.NewCounter(opts)
	got, err := metrics.Register(nil, c)
	require.NoError(t, err)
	require.Same(t, c, got, "nil registers nothing")
}

func TestResult(t *testing.T) {
	gr := schema.GroupResource{Resource: "deployments"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"ok", nil, metrics.ResultOK},
		{"not found", apierrors.NewNotFound(gr, "web"), metrics.ResultNotFound},
		{"already exists", apierrors.NewAlreadyExists(gr, "web"), metrics.ResultAlreadyExists},
		{"conflict, wrapped", fmt.Errorf("kube: update: %w", apierrors.NewConflict(gr, "web", errors.New("stale"))), metrics.ResultConflict},
		{"unreachable", fmt.Errorf("fake: %w", federation.ErrUnreachable), metrics.ResultUnreachable},
		{"timed out", context.DeadlineExceeded, metrics.ResultUnreachable},
		{"forbidden", apierrors.NewForbidden(gr, "web", errors.New("RBAC")), metrics.ResultError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metrics.Result(tt.err); got != tt.want {
				t.Errorf("Result(%v) = %q; want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestReconcilesShareAndCountConflicts(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a, err := metrics.NewReconciles(reg, metrics.LoopSync, "FederatedDeployment")
	require.NoError(t, err)
	b, err := metrics.NewReconciles(reg, metrics.LoopStatus, "FederatedDeployment")
	require.NoError(t, err, "a second loop shares the families")
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "x"}, "y", errors.New("stale"))
	a.Observe(metrics.OutcomeError, conflict, start, start.Add(time.Millisecond))
	a.Observe(metrics.OutcomeError, errors.New("boom"), start, start.Add(time.Millisecond))
	b.Observe(metrics.OutcomeWritten, nil, start, start.Add(time.Second))
	want := `
# HELP fedkit_reconciles_total Passes of a loop over one key, by loop, type of object and outcome (written, unchanged, gone, invalid, conflict, error).
# TYPE fedkit_reconciles_total counter
fedkit_reconciles_total{loop="status",outcome="written",type="FederatedDeployment"} 1
fedkit_reconciles_total{loop="sync",outcome="conflict",type="FederatedDeployment"} 1
fedkit_reconciles_total{loop="sync",outcome="error",type="FederatedDeployment"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "fedkit_reconciles_total"))
}

func TestMembersForgetCluster(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	syncs, err := metrics.NewMembers(reg, metrics.LoopSync)
	require.NoError(t, err)
	status, err := metrics.NewMembers(reg, metrics.LoopStatus)
	require.NoError(t, err)
	syncs.Observe("eu", "create", nil)
	status.Observe("eu", "get", nil)
	status.Observe("us", "get", fmt.Errorf("x: %w", federation.ErrUnreachable))
	require.Equal(t, 3, testutil.CollectAndCount(reg, "fedkit_member_requests_total"))
	syncs.ForgetCluster("eu")
	want := `
# HELP fedkit_member_requests_total Requests of a loop to a member cluster's API server, by loop, cluster, verb (get, list, create, update, patch, delete, watch, probe) and result (ok, not_found, already_exists, conflict, unreachable, error).
# TYPE fedkit_member_requests_total counter
fedkit_member_requests_total{cluster="us",loop="status",result="unreachable",verb="get"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "fedkit_member_requests_total"),
		"a cluster that left loses its series in every loop")
}

// TestObserveDoesNotAllocate: a pass records its outcome without allocating (every loop
// calls it once per pass, resyncs included).
func TestObserveDoesNotAllocate(t *testing.T) {
	r, err := metrics.NewReconciles(prometheus.NewRegistry(), metrics.LoopSync, "FederatedDeployment")
	require.NoError(t, err)
	now, outcome := time.Now(), metrics.OutcomeUnchanged
	r.Observe(outcome, nil, now, now)
	if n := testing.AllocsPerRun(100, func() { r.Observe(outcome, nil, now, now) }); n != 0 {
		t.Errorf("Observe allocates %v times per call; want 0", n)
	}
}

// controllerRuntimeFamilies are what controller-runtime's packages register into its
// metrics.Registry when imported (pkg/internal/metrics/workqueue.go and
// pkg/internal/controller/metrics/metrics.go of v0.25), with the help of
// workqueue_retries_total given: it changed in v0.24. Buckets are not part of a family's
// description (the collector registered first keeps its own), so the reconcile time's are
// shortened here. examples/controllerruntime proves the same against controller-runtime
// itself.
func controllerRuntimeFamilies(retriesHelp string) (map[string]prometheus.Collector, []prometheus.Collector) {
	queue := []string{"name", "controller"}
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12)
	byName := map[string]prometheus.Collector{
		"workqueue_depth": prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth",
			Help: "Current depth of workqueue by workqueue and priority"}, []string{"name", "controller", "priority"}),
		"workqueue_adds_total": prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "adds_total",
			Help: "Total number of adds handled by workqueue"}, queue),
		"workqueue_queue_duration_seconds": prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "queue_duration_seconds",
			Help: "How long in seconds an item stays in workqueue before being requested", Buckets: buckets}, queue),
		"workqueue_work_duration_seconds": prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "work_duration_seconds",
			Help: "How long in seconds processing an item from workqueue takes.", Buckets: buckets}, queue),
		"workqueue_unfinished_work_seconds": prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "unfinished_work_seconds",
			Help: "How many seconds of work has been done that " +
				"is in progress and hasn't been observed by work_duration. Large " +
				"values indicate stuck threads. One can deduce the number of stuck " +
				"threads by observing the rate at which this increases."}, queue),
		"workqueue_longest_running_processor_seconds": prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "longest_running_processor_seconds",
			Help: "How many seconds has the longest running " +
				"processor for workqueue been running."}, queue),
		"workqueue_retries_total": prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "retries_total",
			Help: retriesHelp}, queue),
		"controller_runtime_reconcile_total": prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total",
			Help: "Total number of reconciliations per controller"}, []string{"controller", "result"}),
		"controller_runtime_reconcile_errors_total": prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_errors_total",
			Help: "Total number of reconciliation errors per controller"}, []string{"controller"}),
		"controller_runtime_terminal_reconcile_errors_total": prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_terminal_reconcile_errors_total",
			Help: "Total number of terminal reconciliation errors per controller"}, []string{"controller"}),
		"controller_runtime_reconcile_time_seconds": prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "controller_runtime_reconcile_time_seconds",
			Help: "Length of time per reconciliation per controller", Buckets: []float64{0.005, 0.01, 0.1, 1, 10, 60}}, []string{"controller"}),
		"controller_runtime_max_concurrent_reconciles": prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_max_concurrent_reconciles",
			Help: "Maximum number of concurrent reconciles per controller"}, []string{"controller"}),
		"controller_runtime_active_workers": prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_active_workers",
			Help: "Number of currently used workers per controller"}, []string{"controller"}),
	}
	var all []prometheus.Collector
	for _, c := range byName {
		all = append(all, c)
	}
	return byName, all
}

// TestQueueMetricsJoinControllerRuntime: in a registry that already holds controller-runtime's
// work queue and reconcile families (its metrics.Registry, of v0.24 and later or of an older
// release), a loop's work queue and reconcile metrics register without error and report into
// controller-runtime's own collectors, so one family holds both. A family of the same name
// with other labels (component-base's workqueue_depth{name}) is refused with an error naming
// it.
func TestQueueMetricsJoinControllerRuntime(t *testing.T) {
	for _, help := range []string{
		"Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
		"Total number of retries handled by workqueue",
	} {
		t.Run(help, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			cr, all := controllerRuntimeFamilies(help)
			reg.MustRegister(all...)
			w, err := metrics.NewWorkqueue(reg)
			require.NoError(t, err)
			c, err := metrics.NewControllers(reg)
			require.NoError(t, err)

			const name = "sync/FederatedDeployment"
			w.NewDepthMetric(name).Inc()
			w.NewAddsMetric(name).Inc()
			w.NewLatencyMetric(name).Observe(1)
			w.NewWorkDurationMetric(name).Observe(1)
			w.NewUnfinishedWorkSecondsMetric(name).Set(1)
			w.NewLongestRunningProcessorSecondsMetric(name).Set(1)
			w.NewRetriesMetric(name).Inc()
			q := c.Start(name, 4)
			q.Begin()
			q.End(federation.Result{}, errors.New("boom"), time.Second)
			for family, collector := range cr {
				if n := testutil.CollectAndCount(collector); n == 0 {
					t.Errorf("%s: controller-runtime's collector holds none of the loop's series", family)
				}
			}
		})
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "Current depth of workqueue"}, []string{"name"}))
	_, err := metrics.NewWorkqueue(reg)
	require.ErrorContains(t, err, "workqueue_depth")
}
