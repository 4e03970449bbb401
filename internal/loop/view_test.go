package loop_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
)

// markingWriter is a federation.StatusWriter whose every object of its resource has a change
// pending: Pending returns a copy with status.pending set.
type markingWriter struct{}

func (markingWriter) WriteStatus(string, schema.GroupVersionResource, *unstructured.Unstructured, func(map[string]any) error) error {
	return nil
}

func (markingWriter) Pending(_ schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	out.Object["status"] = map[string]any{"pending": true}
	return out
}

func (markingWriter) Notify(context.Context, string, schema.GroupVersionResource, func(string, federation.Key)) {
}

func clusterObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"env": "prod"}},
		"spec":     map[string]any{"apiEndpoint": "https://" + name + ".example.com"},
	}}
}

// runSynced runs a Loop over sources on host until the test ends and returns it once its
// caches have synced (Run passes over keys only then).
func runSynced(tb testing.TB, host federation.ClusterClient, sources []loop.Source) *loop.Loop {
	tb.Helper()
	l, err := loop.New(host, sources, loop.Options{})
	require.NoError(tb, err)
	synced := make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Run(ctx, loop.ReconcilerFunc(func(context.Context, federation.Key) (federation.Result, error) {
			once.Do(func() { close(synced) })
			return federation.Result{}, nil
		}))
	}()
	tb.Cleanup(func() {
		cancel()
		require.NoError(tb, <-done)
	})
	<-synced
	return l
}

// TestViewBehindPendingReader: a status writer's PendingReader around a Loop's Reader hides
// nothing of the Loop's Reader for other resources than its own (ReaderFor): Clusters read
// through it are the cache's own objects (View, ViewList: no copy) and are decoded once for
// the Cache (ClusterDecoder), and sync's check of the Clusters cache's version is there.
// Before ReaderFor, the wrapper offered Get and List only, so each loop copied every Cluster
// on every pass and decoded them on its own.
func TestViewBehindPendingReader(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	for _, name := range []string{"eu", "us"} {
		create(t, host, federation.ClusterGVR, clusterObject(name))
	}
	create(t, host, configMaps, configMap("default", "a"))
	l := runSynced(t, host, []loop.Source{{GVR: federation.ClusterGVR}, {GVR: configMaps}})
	pr := federation.PendingReader(l.Reader(), markingWriter{}, configMaps)

	behind := loop.ReaderFor(pr, federation.ClusterGVR)
	_, viewer := behind.(loop.Viewer)
	_, decoder := behind.(loop.ClusterDecoder)
	_, versioned := behind.(interface {
		CacheVersion(schema.GroupVersionResource, string) (string, bool)
	})
	require.True(t, viewer && decoder && versioned, "Cluster reads reach the Loop's Reader: Viewer %t, ClusterDecoder %t, CacheVersion %t", viewer, decoder, versioned)

	// The wrapper's own resource keeps its pending changes.
	own, err := loop.ReaderFor(pr, configMaps).Get(ctx, configMaps, "default", "a")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"pending": true}, own.Object["status"], "ReaderFor of the wrapper's own resource is the wrapper")
	viewed, err := loop.View(ctx, pr, configMaps, "default", "a")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"pending": true}, viewed.Object["status"], "View of the wrapper's own resource applies its pending changes")

	// Views are the cache's objects; Get still copies.
	a, err := loop.View(ctx, pr, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	b, err := loop.View(ctx, pr, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	require.Same(t, a, b, "two Views of an unchanged Cluster are the one stored object")
	got, err := pr.Get(ctx, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	require.NotSame(t, a, got, "Get returns a copy")
	require.Equal(t, a, got)
	list, err := loop.ViewList(ctx, pr, federation.ClusterGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Same(t, a, list[0], "ViewList holds the stored objects, sorted by name")
	require.Equal(t, "us", list[1].GetName())

	// Clusters listed through the wrapper are decoded once for the Cache.
	var cl loop.Clusters
	cs, err := cl.List(ctx, pr, logr.Discard())
	require.NoError(t, err)
	require.Len(t, cs, 2)
	shared, err := l.Reader().(loop.ClusterDecoder).DecodeCluster(a)
	require.NoError(t, err)
	require.Equal(t, reflect.ValueOf(shared.Labels).UnsafePointer(), reflect.ValueOf(cs[0].Labels).UnsafePointer(),
		"the listed Cluster shares the Cache's decoded copy")
}

// TestViewWithoutViewer: through a reader that is no Viewer, View and ViewList are Get and List.
func TestViewWithoutViewer(t *testing.T) {
	ctx := context.Background()
	host := fake.NewHost("host")
	create(t, host, federation.ClusterGVR, clusterObject("eu"))
	u, err := loop.View(ctx, host, federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	require.Equal(t, "eu", u.GetName())
	list, err := loop.ViewList(ctx, host, federation.ClusterGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "eu", list[0].GetName())
	_, err = loop.View(ctx, host, federation.ClusterGVR, "", "us")
	require.Error(t, err)
}

// BenchmarkClustersList is one loop's List of C Clusters from a synced Loop's Reader, "direct"
// and behind a status writer's PendingReader ("pending", as sync and the scheduler read): the
// allocations per List are what a pass pays for its Clusters.
//
//	go test -run '^$' -bench ClustersList -benchmem ./internal/loop
func BenchmarkClustersList(b *testing.B) {
	for _, c := range []int{3, 100} {
		host := fake.NewHost("host")
		for i := range c {
			create(b, host, federation.ClusterGVR, clusterObject(fmt.Sprintf("c%03d", i)))
		}
		l := runSynced(b, host, []loop.Source{{GVR: federation.ClusterGVR}})
		for _, wrap := range []string{"direct", "pending"} {
			r := l.Reader()
			if wrap == "pending" {
				r = federation.PendingReader(r, markingWriter{}, configMaps)
			}
			b.Run(fmt.Sprintf("C=%d/%s", c, wrap), func(b *testing.B) {
				var cl loop.Clusters
				b.ReportAllocs()
				for b.Loop() {
					cs, err := cl.List(context.Background(), r, logr.Discard())
					if err != nil || len(cs) != c {
						b.Fatal(err, len(cs))
					}
				}
			})
		}
	}
}
