package loop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// TestRunExportsQueueMetrics: a loop with a Registerer reports its work queue through
// client-go's metrics provider, labelled with the loop's name, into that registerer only; the
// gauges go when Run returns, the counters stay.
func TestRunExportsQueueMetrics(t *testing.T) {
	host := fake.NewCluster("host")
	create(t, host, configMaps, configMap("default", "a"))
	create(t, host, configMaps, configMap("default", "b"))
	reg := prometheus.NewPedanticRegistry()
	failed := false
	rec := &recorder{answer: func(key federation.Key, n int) (federation.Result, error) {
		if key.Name == "a" && n == 1 {
			failed = true
			return federation.Result{}, errors.New("try again")
		}
		return federation.Result{}, nil
	}}
	stop := start(t, newLoop(t, host, []loop.Source{{GVR: configMaps}}, loop.Options{Name: "test/ConfigMap", Registerer: reg, BaseDelay: time.Millisecond}), rec)
	a := federation.Key{Namespace: "default", Name: "a"}
	require.Eventually(t, func() bool { return rec.count(a) == 2 }, 5*time.Second, time.Millisecond)
	require.True(t, failed)

	adds := `
# HELP fedkit_workqueue_adds_total Keys added to a loop's work queue (a key already waiting is added again and counted), by queue name.
# TYPE fedkit_workqueue_adds_total counter
fedkit_workqueue_adds_total{name="test/ConfigMap"} 3
# HELP fedkit_workqueue_retries_total Keys put back into a loop's work queue with backoff after a failed pass, by queue name.
# TYPE fedkit_workqueue_retries_total counter
fedkit_workqueue_retries_total{name="test/ConfigMap"} 1
`
	require.Eventually(t, func() bool {
		return testutil.GatherAndCompare(reg, stringsReader(adds), "fedkit_workqueue_adds_total", "fedkit_workqueue_retries_total") == nil
	}, 5*time.Second, time.Millisecond)
	require.Equal(t, 1, testutil.CollectAndCount(reg, "fedkit_workqueue_depth"), "the depth gauge exists while Run runs")
	n, err := testutil.GatherAndCount(reg, "fedkit_workqueue_work_duration_seconds")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	stop()

	require.Equal(t, 0, testutil.CollectAndCount(reg, "fedkit_workqueue_depth"), "a stopped queue has no depth")
	require.NoError(t, testutil.GatherAndCompare(reg, stringsReader(adds), "fedkit_workqueue_adds_total", "fedkit_workqueue_retries_total"), "counters outlive the Run")
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
