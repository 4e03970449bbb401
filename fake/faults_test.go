package fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

func TestActions(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	created := mustCreate(t, c, deployGVR, deployment("prod", "web", 1))
	_, _ = c.Get(ctx, deployGVR, "prod", "web")
	_, _ = c.List(ctx, deployGVR, "prod", metav1.ListOptions{LabelSelector: "app=web"})
	_, _ = c.Update(ctx, deployGVR, created)
	_, _ = c.UpdateStatus(ctx, deployGVR, created)
	_, _ = c.Patch(ctx, deployGVR, "prod", "web", types.MergePatchType, []byte(`{}`))
	w, err := c.Watch(ctx, deployGVR, "prod", metav1.ListOptions{ResourceVersion: "1"})
	require.NoError(t, err)
	w.Stop()
	_ = c.Delete(ctx, deployGVR, "prod", "missing", noDeleteOptions) // failures are recorded too
	_ = c.Healthy(ctx)
	_, _ = c.ServerVersion(ctx)

	var got []string
	for _, a := range c.Actions() {
		got = append(got, a.String())
	}
	want := []string{
		"create apps/v1/deployments prod/web",
		"get apps/v1/deployments prod/web",
		"list apps/v1/deployments prod/",
		"update apps/v1/deployments prod/web",
		"update-status apps/v1/deployments prod/web",
		"patch apps/v1/deployments prod/web",
		"watch apps/v1/deployments prod/",
		"delete apps/v1/deployments prod/missing",
		"health",
		"version",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Actions (-want +got):\n%s", diff)
	}

	actions := c.Actions()
	require.Equal(t, "status", actions[4].Subresource)
	require.Equal(t, "app=web", actions[2].ListOptions.LabelSelector)
	require.Equal(t, types.MergePatchType, actions[5].PatchType)
	require.Equal(t, "web", actions[0].Object.GetName())

	// Actions returns copies.
	actions[0].Object.SetName("mutated")
	require.Equal(t, "web", c.Actions()[0].Object.GetName())

	// Test-side calls are not recorded.
	c.ClearActions()
	require.NoError(t, c.Drift(deployGVR, "prod", "web", func(u *unstructured.Unstructured) { u.SetLabels(nil) }))
	_, err = c.Peek(deployGVR, "prod", "web")
	require.NoError(t, err)
	require.NoError(t, c.Seed(configMap("prod", "cfg", nil)))
	require.Empty(t, c.Actions())
}

func TestFailOn(t *testing.T) {
	boom := apierrors.NewServiceUnavailable("boom")
	t.Run("limited times", func(t *testing.T) {
		c := newCluster(t, "c")
		c.FailOn(fake.VerbCreate, boom, 2)
		for i, wantErr := range []bool{true, true, false} {
			_, err := c.Create(testCtx(t), configMapGVR, configMap("prod", "cfg", nil))
			require.Equal(t, wantErr, err != nil, "call %d: err = %v", i, err)
			if wantErr {
				require.Same(t, boom, err)
			}
		}
	})
	t.Run("every call, only that verb", func(t *testing.T) {
		c := newCluster(t, "c")
		c.FailOn(fake.VerbGet, boom, 0)
		for range 3 {
			_, err := c.Get(testCtx(t), configMapGVR, "prod", "cfg")
			require.True(t, apierrors.IsServiceUnavailable(err))
		}
		_, err := c.List(testCtx(t), configMapGVR, "", metav1.ListOptions{})
		require.NoError(t, err)
		c.FailOn(fake.VerbGet, nil, 0)
		_, err = c.Get(testCtx(t), configMapGVR, "prod", "cfg")
		require.True(t, apierrors.IsNotFound(err), "cleared: %v", err)
	})
	t.Run("all verbs", func(t *testing.T) {
		c := newCluster(t, "c")
		c.FailOn(fake.VerbAll, boom, 0)
		require.Error(t, c.Healthy(testCtx(t)))
		_, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{})
		require.Same(t, boom, err)
		c.ResetFaults()
		require.NoError(t, c.Healthy(testCtx(t)))
	})
	t.Run("failed writes change nothing", func(t *testing.T) {
		c := newCluster(t, "c")
		c.FailOn(fake.VerbCreate, boom, 0)
		_, _ = c.Create(testCtx(t), configMapGVR, configMap("prod", "cfg", nil))
		require.Empty(t, c.Objects(configMapGVR))
		require.Equal(t, int64(baseRV), c.ResourceVersion())
	})
}

func TestErrorRateIsDeterministic(t *testing.T) {
	pattern := func(seed uint64) []bool {
		c := newCluster(t, "c")
		c.SetErrorRate(fake.VerbGet, 0.3, seed)
		var failed []bool
		for range 200 {
			_, err := c.Get(context.Background(), configMapGVR, "prod", "cfg")
			if err != nil && !apierrors.IsNotFound(err) {
				require.ErrorIs(t, err, fake.ErrInjected)
				require.True(t, apierrors.IsServiceUnavailable(err), "injected error = %v", err)
			}
			failed = append(failed, err != nil && !apierrors.IsNotFound(err))
		}
		return failed
	}
	a, b, other := pattern(42), pattern(42), pattern(7)
	require.Equal(t, a, b, "the same seed fails the same calls")
	require.NotEqual(t, a, other, "another seed fails other calls")
	n := 0
	for _, f := range a {
		if f {
			n++
		}
	}
	require.InDelta(t, 60, n, 25, "about 30%% of 200 calls fail")

	c := newCluster(t, "c")
	c.SetErrorRate(fake.VerbGet, 0, 1)
	_, err := c.Get(context.Background(), configMapGVR, "prod", "cfg")
	require.True(t, apierrors.IsNotFound(err), "rate 0 clears it: %v", err)
}

func TestLatencyOnFakeClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	c := newCluster(t, "c")
	c.SetClock(clk)
	c.SetLatency(fake.VerbCreate, 5*time.Second)

	done := make(chan error, 1)
	go func() {
		_, err := c.Create(context.Background(), configMapGVR, configMap("prod", "cfg", nil))
		done <- err
	}()
	require.Eventually(t, clk.HasWaiters, time.Second, time.Millisecond)
	clk.Step(4 * time.Second)
	// A fake clock fires its timers within Step: one still waiting has time left to wait.
	require.True(t, clk.HasWaiters(), "the call must wait out its latency: 1s is left")
	select {
	case <-done:
		t.Fatal("call returned before its latency elapsed")
	default:
	}
	clk.Step(time.Second)
	require.False(t, clk.HasWaiters(), "the latency elapsed")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Second):
		t.Fatal("call did not return after its latency")
	}
	got, err := c.Peek(configMapGVR, "prod", "cfg")
	require.NoError(t, err)
	require.True(t, clk.Now().Equal(got.GetCreationTimestamp().Time), "creationTimestamp %v comes from the injected clock", got.GetCreationTimestamp())

	// A call whose ctx ends while it waits returns ctx.Err().
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := c.Create(ctx, configMapGVR, configMap("prod", "late", nil))
		done <- err
	}()
	require.Eventually(t, clk.HasWaiters, time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	_, err = c.Peek(configMapGVR, "prod", "late")
	require.True(t, apierrors.IsNotFound(err))

	// Other verbs are not delayed.
	_, err = c.Get(testCtx(t), configMapGVR, "prod", "cfg")
	require.NoError(t, err)
}

func TestCancelledContext(t *testing.T) {
	c := newCluster(t, "c")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Create(ctx, configMapGVR, configMap("prod", "cfg", nil))
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, c.Objects(configMapGVR))
}

func TestHooks(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	var seen []string
	c.SetHooks(fake.Hooks{
		// Delegate, but record and change the object on the way.
		Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			seen = append(seen, "create "+obj.GetName())
			obj = obj.DeepCopy()
			obj.SetLabels(map[string]string{"hooked": "true"})
			return next.Create(ctx, gvr, obj)
		},
		// Fail only for one object.
		Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
			if name == "secret" {
				return nil, apierrors.NewForbidden(gvr.GroupResource(), name, errors.New("no"))
			}
			return next.Get(ctx, gvr, ns, name)
		},
	})
	got := mustCreate(t, c, configMapGVR, configMap("prod", "cfg", nil))
	require.Equal(t, "true", got.GetLabels()["hooked"])
	require.Equal(t, []string{"create cfg"}, seen)

	_, err := c.Get(ctx, configMapGVR, "prod", "secret")
	require.True(t, apierrors.IsForbidden(err))
	_, err = c.Get(ctx, configMapGVR, "prod", "cfg")
	require.NoError(t, err)

	// Verbs without a hook pass through; the zero Hooks removes them.
	_, err = c.List(ctx, configMapGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	c.SetHooks(fake.Hooks{})
	_, err = c.Get(ctx, configMapGVR, "prod", "secret")
	require.True(t, apierrors.IsNotFound(err))
	require.Len(t, c.Actions(), 5, "hooked calls are recorded")
}

func TestHooksForEveryVerb(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	calls := map[string]int{}
	c.SetHooks(fake.Hooks{
		Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
			calls["get"]++
			return next.Get(ctx, gvr, ns, name)
		},
		List: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
			calls["list"]++
			return next.List(ctx, gvr, ns, opts)
		},
		Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			calls["create"]++
			return next.Create(ctx, gvr, obj)
		},
		Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			calls["update"]++
			return next.Update(ctx, gvr, obj)
		},
		UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			calls["update-status"]++
			return next.UpdateStatus(ctx, gvr, obj)
		},
		Patch: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
			calls["patch"]++
			return next.Patch(ctx, gvr, ns, name, pt, data)
		},
		Delete: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
			calls["delete"]++
			return next.Delete(ctx, gvr, ns, name, opts)
		},
		Watch: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
			calls["watch"]++
			return next.Watch(ctx, gvr, ns, opts)
		},
	})
	d := mustCreate(t, c, deployGVR, deployment("prod", "web", 1))
	_, err := c.Get(ctx, deployGVR, "prod", "web")
	require.NoError(t, err)
	_, err = c.List(ctx, deployGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	d, err = c.Update(ctx, deployGVR, d)
	require.NoError(t, err)
	_, err = c.UpdateStatus(ctx, deployGVR, d)
	require.NoError(t, err)
	_, err = c.Patch(ctx, deployGVR, "prod", "web", types.MergePatchType, []byte(`{}`))
	require.NoError(t, err)
	w, err := c.Watch(ctx, deployGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, "ADDED web@"+rv(1), eventName(nextEvent(t, w)))
	w.Stop()
	require.NoError(t, c.Delete(ctx, deployGVR, "prod", "web", metav1.DeleteOptions{}))
	require.Equal(t, map[string]int{
		"get": 1, "list": 1, "create": 1, "update": 1, "update-status": 1, "patch": 1, "delete": 1, "watch": 1,
	}, calls)
}

func TestRecordingOffKeepsCounts(t *testing.T) {
	c := fake.NewCluster("c")
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "default"}}}
	_, err := c.Create(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, cm)
	require.NoError(t, err)
	c.SetRecording(false)
	_, err = c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "a")
	require.NoError(t, err)
	require.Empty(t, c.Actions(), "turning recording off drops what was recorded")
	require.Equal(t, map[fake.Verb]int{fake.VerbCreate: 1, fake.VerbGet: 1}, c.ActionCounts())
	c.SetRecording(true)
	_, _ = c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "a")
	require.Len(t, c.Actions(), 1)
	c.ClearActions()
	require.Empty(t, c.ActionCounts())

	f := fake.NewFleet()
	f.SetRecording(false)
	m := f.Add("m", nil)
	_, _ = m.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "a")
	require.Empty(t, m.Actions())
	require.Equal(t, 1, m.ActionCounts()[fake.VerbGet])
}
