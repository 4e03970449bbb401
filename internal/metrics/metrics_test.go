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
