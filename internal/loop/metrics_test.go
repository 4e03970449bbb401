package loop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// TestRunExportsQueueMetrics: a loop with a Registerer reports its work queue through
// client-go's metrics provider, and each key it takes as a controller-runtime controller
// does, in controller-runtime's families labelled with the loop's name, into that registerer
// only; the gauges go when Run returns, the counters stay.
func TestRunExportsQueueMetrics(t *testing.T) {
	host := fake.NewCluster("host")
	for _, name := range []string{"a", "b", "c"} {
		create(t, host, configMaps, configMap("default", name))
	}
	reg := prometheus.NewPedanticRegistry()
	rec := &recorder{answer: func(key federation.Key, n int) (federation.Result, error) {
		switch {
		case key.Name == "a" && n == 1:
			return federation.Result{}, errors.New("try again")
		case key.Name == "a":
			return federation.Result{RequeueAfter: time.Hour}, nil
		case key.Name == "b":
			return federation.Result{}, federation.Terminal(errors.New("invalid"))
		}
		return federation.Result{}, nil
	}}
	stop := start(t, newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Name: "test/ConfigMap", Registerer: reg, BaseDelay: time.Millisecond}), rec)
	a := federation.Key{Namespace: "default", Name: "a"}
	require.Eventually(t, func() bool { return rec.count(a) == 2 }, 5*time.Second, time.Millisecond)

	counters := `
# HELP controller_runtime_reconcile_errors_total Total number of reconciliation errors per controller
# TYPE controller_runtime_reconcile_errors_total counter
controller_runtime_reconcile_errors_total{controller="test/ConfigMap"} 2
# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="test/ConfigMap",result="error"} 2
controller_runtime_reconcile_total{controller="test/ConfigMap",result="requeue_after"} 1
controller_runtime_reconcile_total{controller="test/ConfigMap",result="success"} 1
# HELP controller_runtime_terminal_reconcile_errors_total Total number of terminal reconciliation errors per controller
# TYPE controller_runtime_terminal_reconcile_errors_total counter
controller_runtime_terminal_reconcile_errors_total{controller="test/ConfigMap"} 1
# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{controller="test/ConfigMap",name="test/ConfigMap"} 4
# HELP workqueue_retries_total Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)
# TYPE workqueue_retries_total counter
workqueue_retries_total{controller="test/ConfigMap",name="test/ConfigMap"} 2
`
	counterNames := []string{"controller_runtime_reconcile_errors_total", "controller_runtime_reconcile_total",
		"controller_runtime_terminal_reconcile_errors_total", "workqueue_adds_total", "workqueue_retries_total"}
	gauges := `
# HELP controller_runtime_active_workers Number of currently used workers per controller
# TYPE controller_runtime_active_workers gauge
controller_runtime_active_workers{controller="test/ConfigMap"} 0
# HELP controller_runtime_max_concurrent_reconciles Maximum number of concurrent reconciles per controller
# TYPE controller_runtime_max_concurrent_reconciles gauge
controller_runtime_max_concurrent_reconciles{controller="test/ConfigMap"} 2
# HELP workqueue_depth Current depth of workqueue by workqueue and priority
# TYPE workqueue_depth gauge
workqueue_depth{controller="test/ConfigMap",name="test/ConfigMap",priority=""} 0
`
	gaugeNames := []string{"controller_runtime_active_workers", "controller_runtime_max_concurrent_reconciles", "workqueue_depth"}
	var last error
	if !assert.Eventually(t, func() bool {
		last = testutil.GatherAndCompare(reg, stringsReader(counters+gauges), append(counterNames, gaugeNames...)...)
		return last == nil
	}, 5*time.Second, time.Millisecond) {
		t.Fatal(last)
	}
	for _, name := range []string{"workqueue_work_duration_seconds", "controller_runtime_reconcile_time_seconds"} {
		n, err := testutil.GatherAndCount(reg, name)
		require.NoError(t, err)
		require.Equal(t, 1, n, name)
	}
	stop()

	for _, name := range gaugeNames {
		require.Equal(t, 0, testutil.CollectAndCount(reg, name), "a stopped queue has no %s", name)
	}
	require.NoError(t, testutil.GatherAndCompare(reg, stringsReader(counters), counterNames...), "counters outlive the Run")
}

// TestRunDeletedHook: Source.Deleted sees every deleted object before its keys are queued.
func TestRunDeletedHook(t *testing.T) {
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "gone"))
	deleted := make(chan string, 1)
	rec := &recorder{}
	stop := start(t, newLoop(t, host, []loop.Source{{GVR: configMaps, Deleted: func(u *unstructured.Unstructured) { deleted <- u.GetName() }}}, loop.Options{}), rec)
	defer stop()
	key := federation.Key{Namespace: "default", Name: "gone"}
	require.Eventually(t, func() bool { return rec.count(key) == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, host.Delete(context.Background(), configMaps, "default", "gone", metav1.DeleteOptions{}))
	select {
	case name := <-deleted:
		require.Equal(t, "gone", name)
	case <-time.After(5 * time.Second):
		t.Fatal("Deleted was not called")
	}
	require.Eventually(t, func() bool { return rec.count(key) == 2 }, 5*time.Second, time.Millisecond)
}
