package fake_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

func TestCreateSetsSystemFields(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	got, err := c.Create(ctx, deployGVR, deployment("prod", "web", 3))
	require.NoError(t, err)

	require.NotEmpty(t, got.GetUID())
	require.False(t, got.GetCreationTimestamp().Time.IsZero())
	require.Equal(t, rv(1), got.GetResourceVersion())
	require.Equal(t, int64(1), got.GetGeneration())
	require.Nil(t, got.GetDeletionTimestamp())

	stored, err := c.Get(ctx, deployGVR, "prod", "web")
	require.NoError(t, err)
	if diff := cmp.Diff(got.Object, stored.Object); diff != "" {
		t.Errorf("Get after Create (-created +got):\n%s", diff)
	}
}

func TestCreateErrors(t *testing.T) {
	withRV := deployment("prod", "web", 1)
	withRV.SetResourceVersion("7")
	noKind := deployment("prod", "web", 1)
	noKind.SetKind("")
	wrongVersion := deployment("prod", "web", 1)
	wrongVersion.SetAPIVersion("apps/v1beta1")
	noName := deployment("prod", "", 1)
	noNamespace := deployment("", "web", 1)

	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		is   func(error) bool
	}{
		{"resourceVersion set", withRV, apierrors.IsInternalError},
		{"kind missing", noKind, apierrors.IsBadRequest},
		{"apiVersion mismatch", wrongVersion, apierrors.IsBadRequest},
		{"neither name nor generateName", noName, apierrors.IsInvalid},
		{"namespaced resource without namespace", noNamespace, apierrors.IsBadRequest},
		{"nil object", nil, apierrors.IsBadRequest},
		{"does not decode into the built-in type", func() *unstructured.Unstructured {
			d := deployment("prod", "web", 1)
			d.Object["spec"].(map[string]any)["replicas"] = "three"
			return d
		}(), apierrors.IsBadRequest},
		{"not JSON", &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "x": make(chan int)}}, apierrors.IsBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			_, err := c.Create(testCtx(t), deployGVR, tc.obj)
			require.Error(t, err)
			require.True(t, tc.is(err), "unexpected error kind: %v", err)
			require.Empty(t, c.Objects(deployGVR))
		})
	}
}

func TestAlreadyExistsAndNotFoundCarryGroupResource(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	mustCreate(t, c, deployGVR, deployment("prod", "web", 1))

	_, err := c.Create(ctx, deployGVR, deployment("prod", "web", 1))
	require.True(t, apierrors.IsAlreadyExists(err), "Create twice = %v; want AlreadyExists", err)
	require.Equal(t, &metav1.StatusDetails{Group: "apps", Kind: "deployments", Name: "web"}, err.(apierrors.APIStatus).Status().Details)

	_, err = c.Get(ctx, deployGVR, "prod", "db")
	require.True(t, apierrors.IsNotFound(err), "Get missing = %v; want NotFound", err)
	require.Equal(t, &metav1.StatusDetails{Group: "apps", Kind: "deployments", Name: "db"}, err.(apierrors.APIStatus).Status().Details)

	_, err = c.Get(ctx, deployGVR, "other", "web")
	require.True(t, apierrors.IsNotFound(err), "namespaces are separate: %v", err)

	_, err = c.Update(ctx, deployGVR, deployment("prod", "db", 1))
	require.True(t, apierrors.IsNotFound(err), "Update missing = %v", err)
	require.True(t, apierrors.IsNotFound(c.Delete(ctx, deployGVR, "prod", "db", noDeleteOptions)))
}

func TestGenerateName(t *testing.T) {
	c := newCluster(t, "c")
	obj := configMap("prod", "", nil)
	obj.SetGenerateName("cfg-")
	names := map[string]bool{}
	for range 20 {
		got := mustCreate(t, c, configMapGVR, obj)
		require.Regexp(t, `^cfg-[bcdfghjklmnpqrstvwxz2456789]{5}$`, got.GetName())
		names[got.GetName()] = true
	}
	require.Len(t, names, 20, "generated names must be distinct")
}

func TestScope(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	ns := namespace("team")
	ns.SetNamespace("ignored")
	got := mustCreate(t, c, namespaceGVR, ns)
	require.Empty(t, got.GetNamespace(), "cluster-scoped objects have no namespace")
	_, err := c.Get(ctx, namespaceGVR, "whatever", "team")
	require.NoError(t, err, "the namespace is ignored for cluster-scoped resources")

	host := fake.NewHost("host")
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "eu"},
		"spec":     map[string]any{"apiEndpoint": "https://eu.example.com"},
	}}
	mustCreate(t, host, federation.ClusterGVR, cluster)

	// A CRD declared cluster-scoped.
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "globals"}
	mustCreate(t, c, crdGVR, crd(gvr.Group, gvr.Resource, "Global", false))
	mustCreate(t, c, gvr, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Global", "metadata": map[string]any{"name": "g"},
	}})
	_, err = c.Get(ctx, gvr, "", "g")
	require.NoError(t, err)

	_, err = c.Get(ctx, deployGVR, "", "web")
	require.True(t, apierrors.IsBadRequest(err), "namespaced Get without namespace = %v", err)
}

func TestStoredStateIsIsolated(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	in := configMap("prod", "cfg", map[string]any{"k": "v"})
	out := mustCreate(t, c, configMapGVR, in)

	// Mutating what we passed or got back must not reach the store.
	in.Object["data"].(map[string]any)["k"] = "changed-in"
	out.Object["data"].(map[string]any)["k"] = "changed-out"
	got, err := c.Get(ctx, configMapGVR, "prod", "cfg")
	require.NoError(t, err)
	require.Equal(t, "v", nested(t, got, "data", "k"))

	got.Object["data"].(map[string]any)["k"] = "changed-get"
	list, err := c.List(ctx, configMapGVR, "prod", metav1.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, "v", nested(t, &list.Items[0], "data", "k"))
}

func TestNumbersAreNormalised(t *testing.T) {
	// Go ints (not valid in unstructured) go through JSON like on the wire.
	c := newCluster(t, "c")
	obj := deployment("prod", "web", 1)
	obj.Object["spec"].(map[string]any)["replicas"] = 4
	got := mustCreate(t, c, deployGVR, obj)
	require.Equal(t, int64(4), nested(t, got, "spec", "replicas"))
	require.NotPanics(t, func() { got.DeepCopy() })
}

func TestUpdateUnconditionalAndConditional(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	created := mustCreate(t, c, configMapGVR, configMap("prod", "cfg", map[string]any{"k": "1"}))

	// Empty resourceVersion: unconditional.
	blind := configMap("prod", "cfg", map[string]any{"k": "2"})
	got, err := c.Update(ctx, configMapGVR, blind)
	require.NoError(t, err)
	require.Equal(t, rv(2), got.GetResourceVersion())
	require.Equal(t, created.GetUID(), got.GetUID(), "uid is kept")
	require.Equal(t, created.GetCreationTimestamp(), got.GetCreationTimestamp())

	// Stale resourceVersion: Conflict with the right GroupResource.
	_, err = c.Update(ctx, configMapGVR, created)
	require.True(t, apierrors.IsConflict(err), "stale Update = %v", err)
	require.Equal(t, "configmaps", err.(apierrors.APIStatus).Status().Details.Kind)

	// Current resourceVersion: accepted.
	got.Object["data"] = map[string]any{"k": "3"}
	got, err = c.Update(ctx, configMapGVR, got)
	require.NoError(t, err)
	require.Equal(t, rv(3), got.GetResourceVersion())

	// A uid that is not the stored one: Conflict.
	other := configMap("prod", "cfg", nil)
	other.SetUID("not-the-uid")
	_, err = c.Update(ctx, configMapGVR, other)
	require.True(t, apierrors.IsConflict(err), "Update with another uid = %v", err)
}

func TestNoOpUpdateKeepsResourceVersion(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	created := mustCreate(t, c, deployGVR, deployment("prod", "web", 2))
	got, err := c.Update(ctx, deployGVR, created)
	require.NoError(t, err)
	require.Equal(t, created.GetResourceVersion(), got.GetResourceVersion())
	require.Equal(t, int64(baseRV+1), c.ResourceVersion())
}

func TestResourceVersionIsClusterWide(t *testing.T) {
	c := newCluster(t, "c")
	a := mustCreate(t, c, configMapGVR, configMap("prod", "x", nil))
	b := mustCreate(t, c, deployGVR, deployment("dev", "y", 1))
	d := mustCreate(t, c, namespaceGVR, namespace("z"))
	require.Equal(t, []string{rv(1), rv(2), rv(3)}, []string{a.GetResourceVersion(), b.GetResourceVersion(), d.GetResourceVersion()})
	require.NoError(t, c.Delete(testCtx(t), configMapGVR, "prod", "x", noDeleteOptions))
	require.Equal(t, int64(baseRV+4), c.ResourceVersion(), "deletes bump it too")
}

func TestZeroCluster(t *testing.T) {
	var c fake.Cluster
	ctx := testCtx(t)
	got := mustCreate(t, &c, configMapGVR, configMap("default", "cfg", nil))
	require.Equal(t, "5", got.GetResourceVersion(), "after the four initial namespaces")
	require.Empty(t, c.Name())
	require.NoError(t, c.Healthy(ctx))
	var zero fake.Cluster
	zero.FailOn(fake.VerbGet, apierrors.NewServiceUnavailable("x"), 1)
	_, err := zero.Get(ctx, configMapGVR, "prod", "cfg")
	require.True(t, apierrors.IsServiceUnavailable(err))
}

func TestUpdateErrors(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	created := mustCreate(t, c, deployGVR, deployment("prod", "web", 1))
	tests := []struct {
		name   string
		mutate func(u *unstructured.Unstructured)
		is     func(error) bool
	}{
		{"no name", func(u *unstructured.Unstructured) { u.SetName("") }, apierrors.IsBadRequest},
		{"no namespace", func(u *unstructured.Unstructured) { u.SetNamespace("") }, apierrors.IsBadRequest},
		{"other apiVersion", func(u *unstructured.Unstructured) { u.SetAPIVersion("apps/v1beta2") }, apierrors.IsBadRequest},
		{"not JSON", func(u *unstructured.Unstructured) { u.Object["bad"] = func() {} }, apierrors.IsBadRequest},
		{"does not decode", func(u *unstructured.Unstructured) { u.Object["spec"] = "flat" }, apierrors.IsBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := created.DeepCopy()
			tc.mutate(obj)
			_, err := c.Update(ctx, deployGVR, obj)
			require.True(t, tc.is(err), "Update = %v", err)
		})
	}
	// A missing kind is taken from the stored object.
	obj := created.DeepCopy()
	obj.SetKind("")
	obj.SetLabels(map[string]string{"x": "y"})
	got, err := c.Update(ctx, deployGVR, obj)
	require.NoError(t, err)
	require.Equal(t, "Deployment", got.GetKind())
}

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
