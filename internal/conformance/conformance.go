package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/federation"
)

// Config describes the implementation under test.
type Config struct {
	// NewClient returns the client under test. It is called once per Run. The API behind it
	// must serve core/v1, apps/v1, discovery.k8s.io/v1, coordination.k8s.io/v1,
	// scheduling.k8s.io/v1 and fedkit's Cluster CRD (on a real server: installed and
	// Established).
	NewClient func(t *testing.T) federation.ClusterClient

	// Skip maps a behaviour's name (see Names) to the reason this implementation does not have
	// it. Such subtests skip with the reason. A name that is not a behaviour fails the run, so
	// the list cannot go stale silently.
	Skip map[string]string

	// WatchTimeout bounds the wait for one watch event. Zero means 10 seconds.
	WatchTimeout time.Duration
}

// Resources the behaviours use.
var (
	ConfigMapGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	SecretGVR     = federation.SecretGVR
	DeploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	NamespaceGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	ClusterGVR    = federation.ClusterGVR

	// Built-ins whose REST strategies have rules of their own.
	DaemonSetGVR     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	EndpointSliceGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	LeaseGVR         = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	PriorityClassGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
)

// behaviour is one row of the table.
type behaviour struct {
	name string
	run  func(t *testing.T, e *env)
}

// behaviours returns the whole table, in the order it runs.
func behaviours() []behaviour {
	var all []behaviour
	all = append(all, crudBehaviours()...)
	all = append(all, validationBehaviours()...)
	all = append(all, metadataBehaviours()...)
	all = append(all, kindBehaviours()...)
	all = append(all, listWatchBehaviours()...)
	all = append(all, patchBehaviours()...)
	all = append(all, servedBehaviours()...)
	all = append(all, namespaceBehaviours()...)
	all = append(all, storedBehaviours()...)
	all = append(all, deletionBehaviours()...)
	all = append(all, nodeBehaviours()...)
	return all
}

// Names returns the names of all behaviours, sorted, for Config.Skip.
func Names() []string {
	var names []string
	for _, b := range behaviours() {
		names = append(names, b.name)
	}
	sort.Strings(names)
	return names
}

// Run runs every behaviour as a subtest of t against the client cfg.NewClient returns.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	known := map[string]bool{}
	for _, b := range behaviours() {
		known[b.name] = true
	}
	for name := range cfg.Skip {
		if !known[name] {
			t.Fatalf("conformance: Config.Skip names %q, which is not a behaviour", name)
		}
	}
	if cfg.WatchTimeout == 0 {
		cfg.WatchTimeout = 10 * time.Second
	}
	c := cfg.NewClient(t)
	e := &env{c: c, run: randomSuffix(), watchTimeout: cfg.WatchTimeout}
	e.ns = "conformance-" + e.run
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(e.ns)
	_, err := c.Create(t.Context(), NamespaceGVR, ns)
	require.NoError(t, err, "create the namespace of the run")

	for _, b := range behaviours() {
		t.Run(b.name, func(t *testing.T) {
			if reason, ok := cfg.Skip[b.name]; ok {
				t.Skip("known difference: " + reason)
			}
			b.run(t, e.forTest(t))
		})
	}
}

// env is what a behaviour works with.
type env struct {
	c            federation.ClusterClient
	ns           string // namespace of this run
	run          string // random suffix of this run, for cluster-scoped names
	watchTimeout time.Duration
	ctx          context.Context
}

func (e *env) forTest(t *testing.T) *env {
	cp := *e
	cp.ctx = t.Context()
	return &cp
}

// name returns a cluster-scoped name unique to this run.
func (e *env) name(base string) string { return base + "-" + e.run }

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// create creates obj and fails the test on error.
func (e *env) create(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := e.c.Create(e.ctx, gvr, obj)
	require.NoError(t, err, "create %s %s", gvr.Resource, obj.GetName())
	return out
}

func (e *env) get(t *testing.T, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	out, err := e.c.Get(e.ctx, gvr, namespace, name)
	require.NoError(t, err, "get %s %s/%s", gvr.Resource, namespace, name)
	return out
}

func (e *env) update(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := e.c.Update(e.ctx, gvr, obj)
	require.NoError(t, err, "update %s %s", gvr.Resource, obj.GetName())
	return out
}

func (e *env) watch(t *testing.T, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) watch.Interface {
	t.Helper()
	w, err := e.c.Watch(e.ctx, gvr, namespace, opts)
	require.NoError(t, err, "watch %s", gvr.Resource)
	t.Cleanup(w.Stop)
	return w
}

// next returns the next event of w, skipping bookmarks, and fails the test when none comes in
// time or the watch ends.
func (e *env) next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	timer := time.NewTimer(e.watchTimeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "the watch ended early")
			if ev.Type == watch.Bookmark {
				continue
			}
			return ev
		case <-timer.C:
			t.Fatalf("no watch event within %s", e.watchTimeout)
		}
	}
}

// noEvent fails the test if w delivers an event (other than a bookmark) within d.
func (e *env) noEvent(t *testing.T, w watch.Interface, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			u, _ := ev.Object.(*unstructured.Unstructured)
			name := ""
			if u != nil {
				name = u.GetName()
			}
			t.Fatalf("unexpected watch event %s %s", ev.Type, name)
		case <-timer.C:
			return
		}
	}
}

// eventName describes an event as "TYPE name" for comparisons.
func eventName(ev watch.Event) string {
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		return string(ev.Type) + " <" + typeName(ev.Object) + ">"
	}
	return string(ev.Type) + " " + u.GetName()
}

func typeName(o any) string { return fmt.Sprintf("%T", o) }
