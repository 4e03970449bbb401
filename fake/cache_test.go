package fake_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// managedCM is a ConfigMap carrying federation.ManagedByLabel.
func managedCM(ns, name string) *unstructured.Unstructured {
	return labelled(configMap(ns, name, nil), map[string]string{federation.ManagedByLabel: "fedkit"})
}

// recorder collects OnMemberChange calls as "cluster ns/name@rv labels".
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) record(cluster string, obj *unstructured.Unstructured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, managed := obj.GetLabels()[federation.ManagedByLabel]
	r.calls = append(r.calls, fmt.Sprintf("%s %s/%s@%s managed=%t", cluster, obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion(), managed))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// TestCachedReaderIsNotAnAPICall: cached reads see the managed objects only, record no
// Action and ignore injected faults.
func TestCachedReaderIsNotAnAPICall(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	ctx := testCtx(t)
	mustCreate(t, eu, configMapGVR, managedCM("prod", "managed"))
	mustCreate(t, eu, configMapGVR, configMap("prod", "foreign", nil))
	eu.ClearActions()
	eu.FailOn(fake.VerbAll, apierrors.NewServiceUnavailable("down"), 0)
	eu.SetLatency(fake.VerbAll, time.Hour)

	r, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	got, err := r.Get(ctx, configMapGVR, "prod", "managed")
	require.NoError(t, err)
	got.SetLabels(nil) // the caller's own copy
	_, err = r.Get(ctx, configMapGVR, "prod", "foreign")
	require.True(t, apierrors.IsNotFound(err), "an unmanaged object is invisible: %v", err)
	list, err := r.List(ctx, configMapGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	require.Equal(t, "managed", list.Items[0].GetName())
	require.Equal(t, strconv.FormatInt(eu.ResourceVersion(), 10), list.GetResourceVersion())
	again, err := r.Get(ctx, configMapGVR, "prod", "managed")
	require.NoError(t, err)
	require.Equal(t, "fedkit", again.GetLabels()[federation.ManagedByLabel])
	require.Empty(t, eu.Actions(), "cached reads are not API calls")

	_, err = r.Get(ctx, deployGVR, "prod", "managed")
	require.True(t, apierrors.IsBadRequest(err), "another resource: %v", err)
	_, err = f.CachedReader("nowhere", configMapGVR)
	require.ErrorIs(t, err, federation.ErrClusterNotFound)
}

// TestOnMemberChange: handlers get every committed change of a managed object, in commit
// order, before the write returns: the client's writes, Seed, Drift, DriftDelete and the
// simulated controllers'; only for members whose cache of the resource was started.
func TestOnMemberChange(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	f := fake.NewFleet()
	f.SetClock(clk)
	f.SetWorkloads(fake.Workloads{Apps: true})
	eu := withNamespaces(t, f.Add("eu", nil))
	us := withNamespaces(t, f.Add("us", nil))
	ctx := testCtx(t)
	var cms, deploys recorder
	defer f.OnMemberChange(configMapGVR, cms.record)()
	defer f.OnMemberChange(deployGVR, deploys.record)()

	mustCreate(t, eu, configMapGVR, managedCM("prod", "early"))
	require.Empty(t, cms.take(), "no cache started: nothing notified")
	_, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	_, err = f.CachedReader("eu", deployGVR)
	require.NoError(t, err)
	require.Empty(t, cms.take(), "starting a cache notifies nothing")

	base := int(eu.ResourceVersion())
	at := func(n int) string { return strconv.Itoa(base + n) }
	a := mustCreate(t, eu, configMapGVR, managedCM("prod", "a")) // 1
	require.Equal(t, []string{"eu prod/a@" + at(1) + " managed=true"}, cms.take(), "before Create returns")
	b := mustCreate(t, eu, configMapGVR, configMap("prod", "b", nil)) // 2: not managed
	b.SetLabels(map[string]string{federation.ManagedByLabel: "x"})    //
	_, err = eu.Update(ctx, configMapGVR, b)                          // 3: becomes managed
	require.NoError(t, err)
	a.SetLabels(nil)
	_, err = eu.Update(ctx, configMapGVR, a) // 4: no longer managed
	require.NoError(t, err)
	require.NoError(t, eu.Drift(configMapGVR, "prod", "b", func(u *unstructured.Unstructured) { // 5
		u.Object["data"] = map[string]any{"k": "v"}
	}))
	require.NoError(t, eu.DriftDelete(configMapGVR, "prod", "b")) // 6
	require.NoError(t, eu.Seed(managedCM("dev", "seeded")))       // 7
	mustCreate(t, us, configMapGVR, managedCM("prod", "elsewhere"))
	want := []string{
		"eu prod/b@" + at(3) + " managed=true",
		"eu prod/a@" + at(4) + " managed=true", // its last managed state, at the new resourceVersion
		"eu prod/b@" + at(5) + " managed=true",
		"eu prod/b@" + at(6) + " managed=true", // deleted: its last state
		"eu dev/seeded@" + at(7) + " managed=true",
	}
	if diff := cmp.Diff(want, cms.take()); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}

	d := deployment("prod", "web", 1)
	d.SetLabels(map[string]string{federation.ManagedByLabel: "fedkit"})
	mustCreate(t, eu, deployGVR, d)
	clk.Step(time.Minute)
	f.Tick() // the simulated controller writes status
	require.Equal(t, []string{"eu prod/web@" + at(8) + " managed=true", "eu prod/web@" + at(9) + " managed=true"}, deploys.take())
	require.Empty(t, cms.take(), "handlers see their resource only")
}

// TestOnMemberChangeCopies: each handler gets its own copy.
func TestOnMemberChangeCopies(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	_, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	var seen []string
	defer f.OnMemberChange(configMapGVR, func(_ string, obj *unstructured.Unstructured) { obj.SetName("mutated") })()
	defer f.OnMemberChange(configMapGVR, func(_ string, obj *unstructured.Unstructured) { seen = append(seen, obj.GetName()) })()
	mustCreate(t, eu, configMapGVR, managedCM("prod", "a"))
	require.Equal(t, []string{"a"}, seen)
	_, err = eu.Peek(configMapGVR, "prod", "a")
	require.NoError(t, err)
}

// TestMemberCachePartition: while the member is partitioned the cache serves the state it had
// and notifies nothing; at Heal it catches up and the handlers get the differences.
func TestMemberCachePartition(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	ctx := testCtx(t)
	r, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	var rec recorder
	defer f.OnMemberChange(configMapGVR, rec.record)()
	mustCreate(t, eu, configMapGVR, managedCM("prod", "changed"))
	mustCreate(t, eu, configMapGVR, managedCM("prod", "deleted"))
	mustCreate(t, eu, configMapGVR, managedCM("prod", "same"))
	rec.take()
	frozenRV := eu.ResourceVersion()

	require.NoError(t, f.Partition("eu"))
	require.NoError(t, eu.Drift(configMapGVR, "prod", "changed", func(u *unstructured.Unstructured) {
		u.Object["data"] = map[string]any{"k": "v"}
	}))
	require.NoError(t, eu.DriftDelete(configMapGVR, "prod", "deleted"))
	require.NoError(t, eu.Seed(managedCM("dev", "added")))
	require.Empty(t, rec.take(), "a frozen cache notifies nothing")
	list, err := r.List(ctx, configMapGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"changed", "deleted", "same"}, names(list))
	require.Equal(t, strconv.FormatInt(frozenRV, 10), list.GetResourceVersion())
	got, err := r.Get(ctx, configMapGVR, "prod", "changed")
	require.NoError(t, err)
	require.Nil(t, got.Object["data"], "the state it had")
	_, err = r.Get(ctx, configMapGVR, "dev", "added")
	require.True(t, apierrors.IsNotFound(err))

	require.NoError(t, f.Heal("eu"))
	want := []string{ // namespace and name order
		"eu dev/added@" + strconv.FormatInt(frozenRV+3, 10) + " managed=true",
		"eu prod/changed@" + strconv.FormatInt(frozenRV+1, 10) + " managed=true",
		"eu prod/deleted@" + strconv.FormatInt(frozenRV-1, 10) + " managed=true", // as it was
	}
	if diff := cmp.Diff(want, rec.take()); diff != "" {
		t.Errorf("notifications at Heal (-want +got):\n%s", diff)
	}
	list, err = r.List(ctx, configMapGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"added", "changed", "same"}, names(list))
}

// TestMemberCacheStartedWhilePartitioned: a cache that never saw the member has not synced:
// its reads fail at once as unreachable (a caller without a deadline is not held), until Heal.
func TestMemberCacheStartedWhilePartitioned(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	mustCreate(t, eu, configMapGVR, managedCM("prod", "a"))
	require.NoError(t, f.Partition("eu"))
	r, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	_, err = r.List(context.Background(), configMapGVR, "", metav1.ListOptions{})
	require.ErrorIs(t, err, federation.ErrUnreachable, "not synced: the read fails at once")
	_, err = r.Get(context.Background(), configMapGVR, "prod", "a")
	require.ErrorIs(t, err, federation.ErrUnreachable)

	require.NoError(t, f.Heal("eu"))
	u, err := r.Get(testCtx(t), configMapGVR, "prod", "a")
	require.NoError(t, err)
	require.Equal(t, "a", u.GetName(), "the read answers once the cache synced")
}

// TestOnMemberChangeRemove: once remove returns, fn is not called again; remove waits for a
// call running on another goroutine.
func TestOnMemberChangeRemove(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	_, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	entered, release := make(chan struct{}), make(chan struct{})
	var calls []string
	remove := f.OnMemberChange(configMapGVR, func(_ string, obj *unstructured.Unstructured) {
		calls = append(calls, obj.GetName())
		if obj.GetName() == "blocking" {
			close(entered)
			<-release
		}
	})
	mustCreate(t, eu, configMapGVR, managedCM("prod", "a"))
	go mustCreate(t, eu, configMapGVR, managedCM("prod", "blocking"))
	<-entered
	removed := make(chan struct{})
	go func() { remove(); close(removed) }()
	for range 100 {
		runtime.Gosched()
	}
	select {
	case <-removed:
		t.Fatal("remove returned while fn was running")
	default:
	}
	close(release)
	<-removed
	mustCreate(t, eu, configMapGVR, managedCM("prod", "after"))
	require.Equal(t, []string{"a", "blocking"}, calls)
	remove() // idempotent
}

// TestFleetRemoveStopsNotifications: a member taken out of the fleet is no longer notified.
func TestFleetRemoveStopsNotifications(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	_, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	var rec recorder
	defer f.OnMemberChange(configMapGVR, rec.record)()
	require.True(t, f.Remove("eu"))
	mustCreate(t, eu, configMapGVR, managedCM("prod", "a"))
	require.Empty(t, rec.take())
	_, err = f.CachedReader("eu", configMapGVR)
	require.ErrorIs(t, err, federation.ErrClusterNotFound)
}

// TestMemberCacheConcurrent: concurrent writers on several members, cached readers, partitions
// and a handler writing back to its member; run with -race. Each member's notifications come
// in its commit order.
func TestMemberCacheConcurrent(t *testing.T) {
	f := fake.NewFleet()
	members := []string{"a", "b", "c"}
	for _, name := range members {
		withNamespaces(t, f.Add(name, nil))
		_, err := f.CachedReader(name, configMapGVR)
		require.NoError(t, err)
	}
	var mu sync.Mutex
	last := map[string]int{}
	ordered := true
	defer f.OnMemberChange(configMapGVR, func(cluster string, obj *unstructured.Unstructured) {
		rv, _ := strconv.Atoi(obj.GetResourceVersion())
		mu.Lock()
		if rv <= last[cluster] {
			ordered = false
		}
		last[cluster] = rv
		mu.Unlock()
		if cluster == "a" && obj.GetName() == "w0-0" { // a handler writing to its member: delivered after it returns
			c, _ := f.Member(cluster)
			_, _ = c.Create(context.Background(), configMapGVR, managedCM("dev", "echo"))
		}
	})()

	ctx := testCtx(t)
	var wg sync.WaitGroup
	var created sync.Map // member -> *atomic.Int64: writes that went through (b is partitioned at times)
	for _, name := range members {
		c, _ := f.Member(name)
		r, _ := f.CachedReader(name, configMapGVR)
		n := new(atomic.Int64)
		created.Store(name, n)
		for w := range 2 {
			wg.Go(func() {
				for i := range 50 {
					if _, err := c.Create(ctx, configMapGVR, managedCM("prod", fmt.Sprintf("w%d-%d", w, i))); err == nil {
						n.Add(1)
					}
				}
			})
		}
		wg.Go(func() {
			for range 50 {
				_, _ = r.List(ctx, configMapGVR, "", metav1.ListOptions{})
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			_ = f.Partition("b")
			_ = f.Heal("b")
		}
	})
	wg.Wait()
	require.True(t, ordered, "notifications in commit order")
	for _, name := range members {
		c, _ := f.Member(name)
		n, _ := created.Load(name)
		echo := 0
		if name == "a" {
			echo = 1
		}
		require.Len(t, c.Objects(configMapGVR), int(n.(*atomic.Int64).Load())+echo, "%s: the writes and the echo", name)
		mu.Lock()
		require.EqualValues(t, c.ResourceVersion(), last[name], "%s: the last write was notified", name)
		mu.Unlock()
	}
}

func names(l *unstructured.UnstructuredList) []string {
	var out []string
	for _, u := range l.Items {
		out = append(out, u.GetName())
	}
	return out
}

var _ federation.ReadOnlyMemberChanges = (*fake.Fleet)(nil)

// TestOnMemberChangeReadOnly: a read-only handler is notified of the same changes, in the same
// order, as a copying one, including at Heal, and gets the stored object itself: the read-only
// handlers of one change share one object, which is not the copying handlers' copy.
func TestOnMemberChangeReadOnly(t *testing.T) {
	f := fake.NewFleet()
	eu := withNamespaces(t, f.Add("eu", nil))
	_, err := f.CachedReader("eu", configMapGVR)
	require.NoError(t, err)
	var copied, shared recorder
	var got [2][]*unstructured.Unstructured // what each read-only handler was given
	var copies []*unstructured.Unstructured
	defer f.OnMemberChange(configMapGVR, func(cluster string, obj *unstructured.Unstructured) {
		copied.record(cluster, obj)
		copies = append(copies, obj)
	})()
	defer f.OnMemberChangeReadOnly(configMapGVR, func(cluster string, obj *unstructured.Unstructured) {
		shared.record(cluster, obj)
		got[0] = append(got[0], obj)
	})()
	defer f.OnMemberChangeReadOnly(configMapGVR, func(_ string, obj *unstructured.Unstructured) {
		got[1] = append(got[1], obj)
	})()
	defer f.OnMemberChangeReadOnly(deployGVR, func(string, *unstructured.Unstructured) {
		t.Error("a read-only handler of another resource was called")
	})()

	mustCreate(t, eu, configMapGVR, managedCM("prod", "a"))
	mustCreate(t, eu, configMapGVR, configMap("prod", "foreign", nil)) // not managed: no call
	require.NoError(t, eu.Drift(configMapGVR, "prod", "a", func(u *unstructured.Unstructured) {
		u.Object["data"] = map[string]any{"k": "v"}
	}))
	require.NoError(t, f.Partition("eu"))
	require.NoError(t, eu.Seed(managedCM("prod", "b")))
	require.NoError(t, f.Heal("eu"))
	a, err := eu.Get(testCtx(t), configMapGVR, "prod", "a")
	require.NoError(t, err)
	a.SetLabels(nil)
	_, err = eu.Update(testCtx(t), configMapGVR, a) // no longer managed: its last managed state
	require.NoError(t, err)

	want := copied.take()
	require.Len(t, want, 4)
	if diff := cmp.Diff(want, shared.take()); diff != "" {
		t.Errorf("read-only notifications (-copying handler's +read-only handler's):\n%s", diff)
	}
	require.Len(t, got[1], len(got[0]))
	for i := range got[0] {
		require.Same(t, got[0][i], got[1][i], "notification %d: the read-only handlers share the object", i)
		require.NotSame(t, copies[i], got[0][i], "notification %d: the copying handler has its own", i)
	}
	stored, err := eu.Peek(configMapGVR, "prod", "b")
	require.NoError(t, err)
	require.Equal(t, stored.Object, got[0][2].Object, "the object as stored")
}

// TestCacheHealth: a member's caches are in contact until it is partitioned; then they are
// cut off since the partition began, with the partition's error, until Heal.
func TestCacheHealth(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	fleet := fake.NewFleet()
	fleet.SetClock(clk)
	fleet.Add("eu", nil)
	gvr := federation.DeploymentType.TargetGVR()
	_, err := fleet.CachedReader("eu", gvr)
	require.NoError(t, err)

	tests := []struct {
		name      string
		act       func()
		wantSince time.Time
		wantErr   bool
	}{
		{name: "in contact", act: func() {}, wantSince: t0},
		{name: "partitioned a minute later", act: func() { clk.Step(time.Minute); require.NoError(t, fleet.Partition("eu")) }, wantSince: t0.Add(time.Minute), wantErr: true},
		{name: "still cut off an hour later", act: func() { clk.Step(time.Hour) }, wantSince: t0.Add(time.Minute), wantErr: true},
		{name: "healed", act: func() { require.NoError(t, fleet.Heal("eu")) }, wantSince: t0.Add(time.Hour + time.Minute)},
	}
	for _, tt := range tests {
		tt.act()
		since, err := fleet.CacheHealth("eu", gvr)
		require.True(t, since.Equal(tt.wantSince), "%s: since %s, want %s", tt.name, since, tt.wantSince)
		require.Equal(t, tt.wantErr, err != nil, "%s: %v", tt.name, err)
		if err != nil {
			require.ErrorIs(t, err, federation.ErrUnreachable, tt.name)
		}
	}
	_, err = fleet.CacheHealth("nowhere", gvr)
	require.True(t, errors.Is(err, federation.ErrClusterNotFound), "%v", err)
}
