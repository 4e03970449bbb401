package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
	fedsync "github.com/fedkit/fedkit/sync"
)

// TestMetricsShareControllerRuntimeRegistry: fedkit's loops given controller-runtime's own
// registry (crmetrics.Registry, which controller-runtime fills when it is imported) join its
// work queue and reconcile families instead of failing to register: one scrape shows a
// controller-runtime controller's queue and fedkit's queues side by side in workqueue_depth,
// workqueue_adds_total and controller_runtime_reconcile_total. It needs no API server: the
// loops run on fedkit's fake host, the controller on a source that adds one request.
func TestMetricsShareControllerRuntimeRegistry(t *testing.T) {
	host, fleet := fake.NewHost("host"), fake.NewFleet()
	fd := &unstructured.Unstructured{}
	fd.SetGroupVersionKind(federation.DeploymentType.Federated)
	fd.SetNamespace("default")
	fd.SetName("web")
	if _, err := host.Create(context.Background(), federation.DeploymentType.FederatedGVR(), fd); err != nil {
		t.Fatal(err)
	}
	typ := federation.DeploymentType
	sched, err := scheduler.New(host, typ, scheduler.Options{Registerer: crmetrics.Registry})
	if err != nil {
		t.Fatalf("scheduler into controller-runtime's registry: %v", err)
	}
	syncer, err := fedsync.New(host, fleet, typ, fedsync.Options{Registerer: crmetrics.Registry})
	if err != nil {
		t.Fatalf("sync into controller-runtime's registry: %v", err)
	}

	const crName = "metrics-test"
	c, err := controller.NewUnmanaged(crName, controller.Options{
		SkipNameValidation: ptr.To(true),
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Watch(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "web"}})
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, run := range []func(context.Context) error{sched.Run, syncer.Run, c.Start} {
		wg.Go(func() { errs <- run(ctx) })
	}
	defer func() {
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}()

	queues := []string{crName, "scheduler/FederatedDeployment", "sync/FederatedDeployment"}
	var missing []string
	deadline := time.Now().Add(time.Minute)
	for {
		missing = nil
		for _, family := range []string{"workqueue_depth", "workqueue_adds_total"} {
			for _, q := range queues {
				if !hasSeries(t, family, map[string]string{"name": q, "controller": q}) {
					missing = append(missing, fmt.Sprintf("%s{name=%q}", family, q))
				}
			}
		}
		for _, q := range queues {
			if !hasSeries(t, "controller_runtime_reconcile_total", map[string]string{"controller": q}, positive) {
				missing = append(missing, fmt.Sprintf("controller_runtime_reconcile_total{controller=%q} > 0", q))
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("controller-runtime's registry lacks %v", missing)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// positive is a series whose counter has counted.
func positive(m *dto.Metric) bool { return m.GetCounter().GetValue() > 0 }

// hasSeries reports whether controller-runtime's registry holds a series of family with the
// given labels that every check accepts.
func hasSeries(t *testing.T, family string, labels map[string]string, checks ...func(*dto.Metric) bool) bool {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering controller-runtime's registry: %v", err)
	}
	i := slices.IndexFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == family })
	if i < 0 {
		return false
	}
	for _, m := range mfs[i].GetMetric() {
		if matches(m, labels) && !slices.ContainsFunc(checks, func(check func(*dto.Metric) bool) bool { return !check(m) }) {
			return true
		}
	}
	return false
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := labels[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}
