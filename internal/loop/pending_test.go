package loop_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/loop"
	"github.com/fedkit/fedkit/internal/statuswrite"
)

// pendingFixture is a synced Loop caching ConfigMaps on a fake host holding default/a, and a
// status writer's PendingReader around its Reader (the writer's window long enough that
// nothing is written meanwhile).
func pendingFixture(tb testing.TB) (federation.Reader, *loop.Loop, *statuswrite.Writer) {
	tb.Helper()
	host := fake.NewHost("host")
	create(tb, host, configMaps, configMap("default", "a"))
	l := runSynced(tb, host, []loop.Source{{GVR: configMaps}})
	w := statuswrite.New(host, statuswrite.Options{Window: time.Hour})
	return federation.PendingReader(l.Reader(), w, configMaps), l, w
}

// TestPendingReaderOverTheCache: read through a status writer's PendingReader around a Loop's
// Reader, an object is the caller's own copy, with the pending changes or without, and
// changing it changes neither the cache nor the next read.
func TestPendingReaderOverTheCache(t *testing.T) {
	ctx := context.Background()
	pr, l, w := pendingFixture(t)
	stored, err := loop.View(ctx, l.Reader(), configMaps, "default", "a")
	require.NoError(t, err)
	before := stored.DeepCopy()

	for _, step := range []struct {
		name   string
		change bool
		want   any
	}{
		{"nothing pending", false, nil},
		{"a change pending", true, map[string]any{"observedGeneration": int64(1)}},
	} {
		if step.change {
			u, err := l.Reader().Get(ctx, configMaps, "default", "a")
			require.NoError(t, err)
			require.NoError(t, w.WriteStatus("sync", configMaps, u, func(status map[string]any) error {
				status["observedGeneration"] = int64(1)
				return nil
			}))
		}
		got, err := pr.Get(ctx, configMaps, "default", "a")
		require.NoError(t, err, step.name)
		require.NotSame(t, stored, got, "%s: the caller's own copy", step.name)
		require.Equal(t, step.want, got.Object["status"], step.name)
		got.Object["status"] = "changed by the caller"
		unstructured.RemoveNestedField(got.Object, "metadata", "name")
		again, err := pr.Get(ctx, configMaps, "default", "a")
		require.NoError(t, err)
		require.Equal(t, step.want, again.Object["status"], "%s: the next read is untouched", step.name)
		require.Equal(t, "a", again.GetName(), step.name)
		require.Equal(t, before, stored, "%s: the cache is untouched", step.name)
	}
}

// BenchmarkPendingReaderGet is one Get of a cached object through a status writer's
// PendingReader, without and with a change pending: the allocations are the copies a pass
// pays for the object it reads (sync, the scheduler and the collector read so).
//
//	go test -run '^$' -bench PendingReaderGet -benchmem ./internal/loop
func BenchmarkPendingReaderGet(b *testing.B) {
	for _, change := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "pending"}[change], func(b *testing.B) {
			ctx := context.Background()
			pr, l, w := pendingFixture(b)
			if change {
				u, err := l.Reader().Get(ctx, configMaps, "default", "a")
				require.NoError(b, err)
				require.NoError(b, w.WriteStatus("sync", configMaps, u, func(status map[string]any) error {
					status["observedGeneration"] = int64(1)
					return nil
				}))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pr.Get(ctx, configMaps, "default", "a"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
