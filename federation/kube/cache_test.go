package kube

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func configMap(namespace, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func managed(extra map[string]string) map[string]string {
	l := map[string]string{federation.ManagedByLabel: federation.ManagedByValue}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// staticSet returns a running-capable set whose members are dynamic fakes.
func staticSet(t *testing.T, members map[string]*Client) *ClusterSet {
	t.Helper()
	opts := ClusterSetOptions{}
	require.NoError(t, opts.complete())
	s := &ClusterSet{opts: opts, members: map[string]*member{}}
	for name, c := range members {
		s.members[name] = &member{client: c}
	}
	return s
}

func names(l *unstructured.UnstructuredList) []string {
	var out []string
	for _, u := range l.Items {
		out = append(out, federation.Key{Namespace: u.GetNamespace(), Name: u.GetName()}.String())
	}
	return out
}

func TestCachedReader(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"},
		configMap("a", "web", managed(map[string]string{"app": "web"})),
		configMap("a", "db", managed(map[string]string{"app": "db"})),
		configMap("b", "web", managed(map[string]string{"app": "web"})),
		configMap("a", "unmanaged", map[string]string{"app": "web"}),
		configMap("a", "theirs", map[string]string{federation.ManagedByLabel: "another-federation"}),
	)
	set := staticSet(t, map[string]*Client{"eu": dynamicClient(t, dyn)})
	set.members["broken"] = &member{notReady: ErrInvalidCredentials}

	_, err := set.CachedReader("eu", cmGVR)
	require.ErrorIs(t, err, ErrNotRunning, "no informers outside Run")

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	var r federation.Reader
	require.Eventually(t, func() bool {
		r, err = set.CachedReader("eu", cmGVR)
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	_, err = set.CachedReader("nowhere", cmGVR)
	require.ErrorIs(t, err, federation.ErrClusterNotFound)
	_, err = set.CachedReader("broken", cmGVR)
	require.ErrorIs(t, err, federation.ErrClusterNotReady)
	require.ErrorIs(t, err, ErrInvalidCredentials)

	got, err := r.Get(ctx, cmGVR, "a", "web")
	require.NoError(t, err)
	require.Equal(t, "web", got.GetName())
	got.SetLabels(nil) // a copy: the cache must not change
	again, err := r.Get(ctx, cmGVR, "a", "web")
	require.NoError(t, err)
	require.Equal(t, "web", again.GetLabels()["app"])

	// Views are the cache's own objects (the collector reads member objects so): no copy.
	v, ok := r.(loop.Viewer)
	require.True(t, ok, "the cached reader reads without copies too")
	view, err := v.View(ctx, cmGVR, "a", "web")
	require.NoError(t, err)
	view2, err := v.View(ctx, cmGVR, "a", "web")
	require.NoError(t, err)
	require.Same(t, view, view2)
	require.Equal(t, again, view)
	views, err := v.ViewList(ctx, cmGVR, "a", metav1.ListOptions{LabelSelector: "app=web"})
	require.NoError(t, err)
	require.Len(t, views, 1)
	require.Same(t, view, views[0])
	_, err = v.View(ctx, cmGVR, "a", "missing")
	require.True(t, apierrors.IsNotFound(err))

	_, err = r.Get(ctx, cmGVR, "a", "unmanaged")
	require.True(t, apierrors.IsNotFound(err), "unmanaged objects are not cached: %v", err)
	_, err = r.Get(ctx, cmGVR, "a", "missing")
	require.True(t, apierrors.IsNotFound(err))

	lists := []struct {
		name      string
		namespace string
		opts      metav1.ListOptions
		want      []string
	}{
		{"all, whatever the ManagedByLabel value", "", metav1.ListOptions{}, []string{"a/db", "a/theirs", "a/web", "b/web"}},
		{"namespace", "a", metav1.ListOptions{}, []string{"a/db", "a/theirs", "a/web"}},
		{"label selector", "", metav1.ListOptions{LabelSelector: "app=web"}, []string{"a/web", "b/web"}},
		{"set-based selector", "", metav1.ListOptions{LabelSelector: "app notin (web)"}, []string{"a/db", "a/theirs"}},
		{"field selector", "", metav1.ListOptions{FieldSelector: "metadata.name=web"}, []string{"a/web", "b/web"}},
		{"both selectors and namespace", "b", metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name=web"}, []string{"b/web"}},
		{"nothing", "c", metav1.ListOptions{}, nil},
	}
	for _, tt := range lists {
		t.Run(tt.name, func(t *testing.T) {
			l, err := r.List(ctx, cmGVR, tt.namespace, tt.opts)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, names(l)); diff != "" {
				t.Errorf("List() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	_, err = r.List(ctx, cmGVR, "", metav1.ListOptions{LabelSelector: "app in in"})
	require.True(t, apierrors.IsBadRequest(err), "%v", err)
	_, err = r.Get(ctx, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "a", "web")
	require.ErrorIs(t, err, federation.ErrUnknownType)

	// A change on the member reaches the cache.
	_, err = dynamicClient(t, dyn).Create(ctx, cmGVR, configMap("a", "new", managed(nil)))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := r.Get(ctx, cmGVR, "a", "new"); return err == nil }, 5*time.Second, 10*time.Millisecond)

	// Releasing the cluster stops its informers; the reader then says the cluster is gone.
	set.mu.Lock()
	caches := set.members["eu"].caches
	set.mu.Unlock()
	require.True(t, set.release("eu"))
	<-caches.ctx.Done()
	_, err = r.Get(ctx, cmGVR, "a", "web")
	require.ErrorIs(t, err, federation.ErrClusterNotFound)

	cancel()
	require.NoError(t, <-done)
	_, err = set.CachedReader("eu", cmGVR)
	require.ErrorIs(t, err, ErrNotRunning)
}

// TestCachedReaderUnreachableFailsAtOnce: once the informer's list has failed because the
// member cannot be reached, a read fails at once with that error, as a live read would,
// instead of holding a caller without a deadline until the member is back (found by the
// credentials test, test/credentials: every sync and DNS pass hung on one member that was
// unreachable, or whose certificate was not trusted, before its cache had ever synced).
func TestCachedReaderUnreachableFailsAtOnce(t *testing.T) {
	ctx, r, stop := unreachableReader(t)
	var err error

	got := make(chan error, 1)
	go func() { _, err := r.Get(ctx, cmGVR, "a", "web"); got <- err }() // no deadline
	select {
	case err = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("a read of an unreachable member's cache waits for its caller's deadline")
	}
	require.True(t, errors.Is(err, federation.ErrUnreachable), "%v", err)
	require.Contains(t, err.Error(), "cache not synced")
	stop()
}

// TestCachedReaderUnreachable checks that a reader of a cluster that cannot be reached returns
// the informer's error, marked unreachable.
func TestCachedReaderUnreachable(t *testing.T) {
	ctx, r, stop := unreachableReader(t)
	var err error

	getCtx, getCancel := context.WithTimeout(ctx, 2*time.Second)
	defer getCancel()
	_, err = r.Get(getCtx, cmGVR, "a", "web")
	require.Error(t, err)
	require.True(t, errors.Is(err, federation.ErrUnreachable), "%v", err)
	require.Contains(t, err.Error(), "cache not synced")
	stop()
}

// unreachableReader runs a set whose one member, "down", refuses connections, and returns its
// cached reader of ConfigMaps, Run's context and a func that stops Run and checks its error.
func unreachableReader(t *testing.T) (context.Context, federation.Reader, func()) {
	t.Helper()
	c, err := New(restConfigFor("http://127.0.0.1:1"), Options{})
	require.NoError(t, err)
	set := staticSet(t, map[string]*Client{"down": c})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	var r federation.Reader
	require.Eventually(t, func() bool { r, err = set.CachedReader("down", cmGVR); return err == nil }, 5*time.Second, 10*time.Millisecond)
	return ctx, r, func() {
		cancel()
		require.NoError(t, <-done)
	}
}

func restConfigFor(host string) *rest.Config { return &rest.Config{Host: host} }

// dynamicClient returns a Client on dyn.
func dynamicClient(t *testing.T, dyn dynamic.Interface) *Client {
	t.Helper()
	c, err := New(nil, Options{Dynamic: dyn})
	require.NoError(t, err)
	return c
}

// events records what OnMemberChange handlers receive.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) record(cluster string, obj *unstructured.Unstructured) {
	obj.SetLabels(nil) // a copy: the cache must not change
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, cluster+":"+obj.GetNamespace()+"/"+obj.GetName())
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func (e *events) has(want ...string) func() bool {
	return func() bool {
		got := e.list()
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	}
}

// TestOnMemberChange checks that handlers see the managed objects (any ManagedByLabel value)
// of every informer of their resource, running or started later, and stop when removed.
func TestOnMemberChange(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	other := map[string]string{federation.ManagedByLabel: "another-federation"}
	newDyn := func() *dynamicfake.FakeDynamicClient {
		return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"},
			configMap("default", "ours", managed(nil)),
			configMap("default", "theirs", other),
			configMap("default", "unmanaged", nil))
	}
	dyn := newDyn()
	set := staticSet(t, map[string]*Client{"eu": dynamicClient(t, dyn)})
	early, late := &events{}, &events{}
	removeEarly := set.OnMemberChange(cmGVR, early.record)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	require.Eventually(t, func() bool { _, err := set.CachedReader("eu", cmGVR); return err == nil }, 5*time.Second, time.Millisecond)

	require.Eventually(t, early.has("eu:default/ours", "eu:default/theirs"), 5*time.Second, time.Millisecond, "the first list, whatever the ManagedByLabel value")
	removeLate := set.OnMemberChange(cmGVR, late.record)
	defer removeLate()
	writer := dynamicClient(t, dyn)
	_, err := writer.Create(ctx, cmGVR, configMap("default", "new", managed(nil)))
	require.NoError(t, err)
	require.Eventually(t, late.has("eu:default/new"), 5*time.Second, time.Millisecond, "a handler registered later sees the running informer")
	require.Eventually(t, early.has("eu:default/new"), 5*time.Second, time.Millisecond)
	r, err := set.CachedReader("eu", cmGVR)
	require.NoError(t, err)
	got, err := r.Get(ctx, cmGVR, "default", "new")
	require.NoError(t, err)
	require.NotEmpty(t, got.GetLabels(), "handlers get copies")

	removeEarly()
	removeEarly() // twice is harmless
	before := len(early.list())
	require.NoError(t, writer.Delete(ctx, cmGVR, "default", "new", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return len(late.list()) == 2 }, 5*time.Second, time.Millisecond, "the deletion, in its last state: %v", late.list())
	require.Equal(t, before, len(early.list()), "a removed handler is not called")
	require.Empty(t, slices.DeleteFunc(early.list(), func(s string) bool { return !strings.Contains(s, "unmanaged") }))

	// A rebuilt client gets a new informer, which the registered handler joins.
	set.install("eu", &member{client: dynamicClient(t, newDyn())})
	_, err = set.CachedReader("eu", cmGVR)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(late.list()) == 4 }, 5*time.Second, time.Millisecond, "the new informer's first list: %v", late.list())
	require.Equal(t, []string{"eu:default/new", "eu:default/new", "eu:default/ours", "eu:default/theirs"}, sorted(late.list()))

	cancel()
	require.NoError(t, <-done)
}

// TestCacheHealth: a member cache is in contact while its lists and watches succeed; once
// the member stops answering (its watch breaks, the lists that follow are refused) the cache
// says so, with the time it last heard from the member, while it keeps serving its last
// state; when the member answers again, the cache is in contact again.
func TestCacheHealth(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"}, configMap("a", "web", managed(nil)))
	var (
		mu      sync.Mutex
		down    bool
		watches []*watch.RaceFreeFakeWatcher
	)
	refused := &url.Error{Op: "Get", URL: "https://member.invalid/api/v1/configmaps",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	dyn.PrependReactor("list", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return true, nil, refused
		}
		return false, nil, nil
	})
	dyn.PrependWatchReactor("*", func(clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return true, nil, refused
		}
		w := watch.NewRaceFreeFake()
		watches = append(watches, w)
		return true, w, nil
	})
	set := staticSet(t, map[string]*Client{"eu": dynamicClient(t, dyn)})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	var r federation.Reader
	var err error
	require.Eventually(t, func() bool { r, err = set.CachedReader("eu", cmGVR); return err == nil }, 5*time.Second, 10*time.Millisecond)
	_, err = r.Get(ctx, cmGVR, "a", "web")
	require.NoError(t, err)
	_, err = set.CacheHealth("eu", cmGVR)
	require.NoError(t, err, "in contact")

	cutAt := time.Now()
	mu.Lock()
	down = true
	for _, w := range watches {
		w.Stop() // the connection breaks
	}
	mu.Unlock()
	var since time.Time
	require.Eventually(t, func() bool { since, err = set.CacheHealth("eu", cmGVR); return err != nil }, 30*time.Second, 10*time.Millisecond)
	require.True(t, errors.Is(err, federation.ErrUnreachable), "%v", err)
	require.False(t, since.After(cutAt), "the last contact, %s, is before the cut, %s", since, cutAt)
	_, err = r.Get(ctx, cmGVR, "a", "web")
	require.NoError(t, err, "the cache keeps serving its last state")

	mu.Lock()
	down = false
	mu.Unlock()
	require.Eventually(t, func() bool { _, err = set.CacheHealth("eu", cmGVR); return err == nil }, 60*time.Second, 10*time.Millisecond, "in contact again")
}

// pointers records the objects a handler was given, by name.
type pointers struct {
	mu  sync.Mutex
	got map[string]*unstructured.Unstructured
}

func (p *pointers) record(_ string, obj *unstructured.Unstructured) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.got == nil {
		p.got = map[string]*unstructured.Unstructured{}
	}
	p.got[obj.GetName()] = obj
}

func (p *pointers) get(name string) *unstructured.Unstructured {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got[name]
}

// TestOnMemberChangeReadOnly: read-only handlers are called for the same changes as copying
// ones, with the informer's object itself (every read-only handler gets the same one), while a
// copying handler gets its own.
func TestOnMemberChangeReadOnly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var _ federation.ReadOnlyMemberChanges = (*ClusterSet)(nil)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"},
		configMap("default", "listed", managed(nil)))
	set := staticSet(t, map[string]*Client{"eu": dynamicClient(t, dyn)})
	var ro1, ro2, copied pointers
	defer set.OnMemberChangeReadOnly(cmGVR, ro1.record)()
	defer set.OnMemberChangeReadOnly(cmGVR, ro2.record)()
	defer set.OnMemberChange(cmGVR, copied.record)()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- set.Run(ctx) }()
	require.Eventually(t, func() bool { _, err := set.CachedReader("eu", cmGVR); return err == nil }, 5*time.Second, time.Millisecond)
	_, err := dynamicClient(t, dyn).Create(ctx, cmGVR, configMap("default", "created", managed(nil)))
	require.NoError(t, err)
	for _, name := range []string{"listed", "created"} {
		require.Eventually(t, func() bool { return ro1.get(name) != nil && ro2.get(name) != nil && copied.get(name) != nil },
			5*time.Second, time.Millisecond, "every handler sees %s", name)
		require.Same(t, ro1.get(name), ro2.get(name), "%s: the read-only handlers share the informer's object", name)
		require.NotSame(t, ro1.get(name), copied.get(name), "%s: a copying handler has its own", name)
		require.Equal(t, ro1.get(name).Object, copied.get(name).Object)
	}
	cancel()
	require.NoError(t, <-done)
}
