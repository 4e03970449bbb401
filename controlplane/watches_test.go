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
