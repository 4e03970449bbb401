package controlplane_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/hostcache"
)

// watchCounter is a host client that counts, by resource, the most watches open at once (a
// reflector that resumes a watch closes the old one first).
type watchCounter struct {
	federation.ClusterClient
	mu        sync.Mutex
	open, max map[string]int
}

func (w *watchCounter) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	wi, err := w.ClusterClient.Watch(ctx, gvr, namespace, opts)
	if err != nil {
		return nil, err
	}
	res := gvr.GroupResource().String()
	w.mu.Lock()
	w.open[res]++
	w.max[res] = max(w.max[res], w.open[res])
	w.mu.Unlock()
	return &countedWatch{Interface: wi, done: func() {
		w.mu.Lock()
		w.open[res]--
		w.mu.Unlock()
	}}, nil
}

func (w *watchCounter) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.max))
	for k, v := range w.max {
		out[k] = v
	}
	return out
}

// countedWatch calls done once, when it is stopped.
type countedWatch struct {
	watch.Interface
	once sync.Once
	done func()
}

func (c *countedWatch) Stop() {
	c.Interface.Stop()
	c.once.Do(c.done)
}

// TestOneHostWatchPerResource: a default control plane (every built-in type, every loop) keeps
// at most one watch per resource open on the host: its loops share one informer per resource.
func TestOneHostWatchPerResource(t *testing.T) {
	e := newEnv(t)
	crds, err := dnsrecord.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.host.Create(context.Background(), crdGVR, &unstructured.Unstructured{Object: m}); err != nil {
			t.Fatal(err)
		}
	}
	host := &watchCounter{ClusterClient: e.host, open: map[string]int{}, max: map[string]int{}}
	o := e.options()
	o.Types = nil // every built-in type
	cp, err := controlplane.New(host, e.fleet, o)
	if err != nil {
		t.Fatal(err)
	}
	stop := run(cp)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	stepUntilf(t, e.clock, time.Second, func() string { return fmt.Sprint("every loop running: ", states(cp)) }, func() bool {
		for _, l := range cp.Status() {
			if l.State != controlplane.StateRunning {
				return false
			}
		}
		return len(cp.Status()) > 0
	})
	got := host.counts()
	var over []string
	for res, n := range got {
		if n > 1 {
			over = append(over, res)
		}
	}
	sort.Strings(over)
	if diff := cmp.Diff([]string(nil), over); diff != "" {
		t.Errorf("resources watched more than once (-want +got):\n%s\nall watches: %v", diff, got)
	}
}

// TestStaticShardsShareOneCache: four static shards in one process, four control planes
// given one hostcache.Cache (run by the test, their owner), open one watch per host resource
// between them and hold one copy of every object; each with a cache of its own opened four.
func TestStaticShardsShareOneCache(t *testing.T) {
	e := newEnv(t)
	host := &watchCounter{ClusterClient: e.host, open: map[string]int{}, max: map[string]int{}}
	shared, err := hostcache.New(host, hostcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cacheDone := make(chan error, 1)
	go func() { cacheDone <- shared.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-cacheDone; err != nil {
			t.Error(err)
		}
	}()
	const shards = 4
	var cps []*controlplane.ControlPlane
	for i := range shards {
		o := e.options(federation.ConfigMapType)
		o.Disable = controlplane.Parts{DNS: true, Events: true, ClusterSet: i > 0}
		o.Shard = federation.Shard{Index: i, Count: shards}
		o.Cache = shared
		cp, err := controlplane.New(host, e.fleet, o)
		if err != nil {
			t.Fatal(err)
		}
		stop := run(cp)
		defer func() {
			if err := stop(); err != nil {
				t.Error(err)
			}
		}()
		cps = append(cps, cp)
	}
	create(t, e.host, federation.ConfigMapType.FederatedGVR(), federatedConfigMap("cfg"))
	gvr := federation.ConfigMapType.FederatedGVR()
	stepUntilf(t, e.clock, time.Second, func() string { return fmt.Sprint("every shard running and cfg Propagated: ", states(cps[0])) }, func() bool {
		for _, cp := range cps {
			for _, l := range cp.Status() {
				if l.State != controlplane.StateRunning {
					return false
				}
			}
		}
		return e.condition(gvr, "cfg", "Propagated") == "True"
	})
	got := host.counts()
	var over []string
	for res, n := range got {
		if n > 1 {
			over = append(over, res)
		}
	}
	sort.Strings(over)
	if diff := cmp.Diff([]string(nil), over); diff != "" {
		t.Errorf("resources watched more than once by %d shards (-want +got):\n%s\nall watches: %v", shards, diff, got)
	}
}
