package fake_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
)

// TestConcurrentCallers runs optimistic-concurrency writers, watchers, readers, drift,
// simulated controllers and fault toggles at once. Run with -race. The counter proves that
// Conflict detection loses no update; the watch proves events stay in order.
func TestConcurrentCallers(t *testing.T) {
	const writers, increments = 8, 40
	f := fake.NewFleet()
	f.SetWorkloads(fake.Workloads{Apps: true, LoadBalancers: true})
	c := withNamespaces(t, f.Add("main", nil))
	other := withNamespaces(t, f.Add("other", nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mustCreate(t, c, configMapGVR, configMap("prod", "counter", map[string]any{"n": "0"}))
	mustCreate(t, c, deployGVR, deployment("prod", "web", 2))

	w, err := c.Watch(ctx, configMapGVR, "prod", metav1.ListOptions{FieldSelector: "metadata.name=counter"})
	require.NoError(t, err)
	defer w.Stop()

	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range increments {
				for {
					cur, err := c.Get(ctx, configMapGVR, "prod", "counter")
					if err != nil {
						continue // an injected failure: retry
					}
					n, _ := strconv.Atoi(cur.Object["data"].(map[string]any)["n"].(string))
					cur.Object["data"] = map[string]any{"n": strconv.Itoa(n + 1)}
					if _, err := c.Update(ctx, configMapGVR, cur); err == nil {
						break
					} else if !apierrors.IsConflict(err) && !apierrors.IsServiceUnavailable(err) {
						t.Errorf("Update: %v", err)
						return
					}
				}
			}
		})
	}

	stop := make(chan struct{})
	var bg sync.WaitGroup
	background := func(fn func(i int)) {
		bg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
					fn(i)
				}
			}
		})
	}
	background(func(int) { _ = c.Actions() })
	background(func(int) { _, _ = c.List(ctx, configMapGVR, "", metav1.ListOptions{}) })
	background(func(i int) {
		_ = c.Drift(deployGVR, "prod", "web", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(i%5), "spec", "replicas")
		})
		f.Tick()
	})
	background(func(i int) {
		if i%2 == 0 {
			c.SetErrorRate(fake.VerbGet, 0.1, uint64(i))
			_ = f.Partition("other")
		} else {
			c.SetErrorRate(fake.VerbGet, 0, 0)
			_ = f.Heal("other")
		}
		_ = f.Clusters()
		_, _ = other.Get(ctx, configMapGVR, "prod", "x")
	})
	background(func(i int) {
		ow, err := c.Watch(ctx, deployGVR, "", metav1.ListOptions{})
		if err == nil {
			ow.Stop()
		}
		if i%100 == 0 {
			c.ClearActions()
		}
	})

	// Read the counter's events while the writers run: resourceVersions must increase.
	events := make(chan int, 1)
	go func() {
		last, n := 0, 0
		for ev := range w.ResultChan() {
			u := ev.Object.(*unstructured.Unstructured)
			rv, _ := strconv.Atoi(u.GetResourceVersion())
			if rv <= last {
				t.Errorf("event resourceVersion %d after %d", rv, last)
			}
			last = rv
			n, _ = strconv.Atoi(u.Object["data"].(map[string]any)["n"].(string))
			if n == writers*increments {
				break
			}
		}
		events <- n
	}()

	wg.Wait()
	close(stop)
	bg.Wait()
	require.Equal(t, writers*increments, <-events, "the watch saw the final count")
	got, err := c.Peek(configMapGVR, "prod", "counter")
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(writers*increments), got.Object["data"].(map[string]any)["n"], "no lost update")
}
