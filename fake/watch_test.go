package fake_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/fedkit/fedkit/fake"
)

// writeSequence makes five writes to configmaps prod/a and prod/b: rv(1) to rv(5).
func writeSequence(t *testing.T, c *fake.Cluster) {
	t.Helper()
	ctx := testCtx(t)
	mustCreate(t, c, configMapGVR, configMap("prod", "a", nil))                             // 1 Added a
	b := mustCreate(t, c, configMapGVR, configMap("prod", "b", nil))                        // 2 Added b
	_, err := c.Update(ctx, configMapGVR, configMap("prod", "a", map[string]any{"k": "v"})) // 3 Modified a
	require.NoError(t, err)
	require.NoError(t, c.Delete(ctx, configMapGVR, "prod", "a", noDeleteOptions)) // 4 Deleted a
	b.Object["data"] = map[string]any{"x": "y"}
	_, err = c.Update(ctx, configMapGVR, b) // 5 Modified b
	require.NoError(t, err)
}

func collect(t *testing.T, w watch.Interface, n int) []string {
	t.Helper()
	var got []string
	for range n {
		got = append(got, eventName(nextEvent(t, w)))
	}
	return got
}

func TestWatchFromResourceVersion(t *testing.T) {
	all := []string{"ADDED a@" + rv(1), "ADDED b@" + rv(2), "MODIFIED a@" + rv(3), "DELETED a@" + rv(4), "MODIFIED b@" + rv(5)}
	tests := []struct {
		name string
		rv   string
		want []string
	}{
		{"resume after 1", rv(1), all[1:]},
		{"resume after 3", rv(3), all[3:]},
		{"resume at the head", rv(5), nil},
		{"current state for empty resourceVersion", "", []string{"ADDED b@" + rv(5)}},
		{"current state for 0", "0", []string{"ADDED b@" + rv(5)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, "c")
			writeSequence(t, c)
			w, err := c.Watch(testCtx(t), configMapGVR, "prod", metav1.ListOptions{ResourceVersion: tc.rv})
			require.NoError(t, err)
			defer w.Stop()
			got := collect(t, w, len(tc.want))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			// Live events follow in order, and nothing else came before them.
			mustCreate(t, c, configMapGVR, configMap("prod", "c", nil))
			require.Equal(t, "ADDED c@"+rv(6), eventName(nextEvent(t, w)))
		})
	}
}

func TestWatchLiveOrder(t *testing.T) {
	c := newCluster(t, "c")
	w, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	defer w.Stop()
	writeSequence(t, c)
	want := []string{"ADDED a@" + rv(1), "ADDED b@" + rv(2), "MODIFIED a@" + rv(3), "DELETED a@" + rv(4), "MODIFIED b@" + rv(5)}
	if diff := cmp.Diff(want, collect(t, w, len(want))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestWatchTooOld(t *testing.T) {
	c := newCluster(t, "c")
	c.SetWatchHistory(3)
	writeSequence(t, c) // events 1..5; 3..5 kept

	_, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{ResourceVersion: rv(1)})
	require.True(t, apierrors.IsResourceExpired(err), "Watch(rv=1) = %v; want 410 Expired", err)
	require.Equal(t, int32(410), err.(apierrors.APIStatus).Status().Code)

	w, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{ResourceVersion: rv(2)})
	require.NoError(t, err, "rv 2: every later event is still there")
	defer w.Stop()
	require.Equal(t, []string{"MODIFIED a@" + rv(3), "DELETED a@" + rv(4), "MODIFIED b@" + rv(5)}, collect(t, w, 3))

	_, err = c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{ResourceVersion: "x"})
	require.True(t, apierrors.IsBadRequest(err), "Watch(rv=x) = %v", err)
}

func TestWatchLabelSelectorTransitions(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	w, err := c.Watch(ctx, configMapGVR, "prod", metav1.ListOptions{LabelSelector: "watched=yes"})
	require.NoError(t, err)
	defer w.Stop()

	cm := mustCreate(t, c, configMapGVR, configMap("prod", "cfg", nil)) // 1 not matching
	mustCreate(t, c, configMapGVR, configMap("dev", "cfg", nil))        // 2 other namespace
	cm.SetLabels(map[string]string{"watched": "yes"})
	cm, err = c.Update(ctx, configMapGVR, cm) // 3 starts matching: Added
	require.NoError(t, err)
	cm.Object["data"] = map[string]any{"k": "v"}
	cm, err = c.Update(ctx, configMapGVR, cm) // 4 Modified
	require.NoError(t, err)
	cm.SetLabels(nil)
	_, err = c.Update(ctx, configMapGVR, cm) // 5 stops matching: Deleted
	require.NoError(t, err)

	require.Equal(t, []string{"ADDED cfg@" + rv(3), "MODIFIED cfg@" + rv(4), "DELETED cfg@" + rv(5)}, collect(t, w, 3))
	// Nothing else came: the next event is the next matching write.
	mustCreate(t, c, configMapGVR, labelled(configMap("prod", "sentinel", nil), map[string]string{"watched": "yes"}))
	require.Equal(t, "ADDED sentinel@"+rv(6), eventName(nextEvent(t, w)))
}

func TestWatchFieldSelector(t *testing.T) {
	c := newCluster(t, "c")
	w, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{FieldSelector: "metadata.name=b"})
	require.NoError(t, err)
	defer w.Stop()
	writeSequence(t, c)
	require.Equal(t, []string{"ADDED b@" + rv(2), "MODIFIED b@" + rv(5)}, collect(t, w, 2))
	// Nothing else came: the next event is the next write to b.
	require.NoError(t, c.DriftDelete(configMapGVR, "prod", "b"))
	require.Equal(t, "DELETED b@"+rv(6), eventName(nextEvent(t, w)))
}

func TestWatchSendInitialEventsBookmark(t *testing.T) {
	c := newCluster(t, "c")
	writeSequence(t, c)
	w, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{
		SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	require.NoError(t, err)
	defer w.Stop()
	require.Equal(t, "ADDED b@"+rv(5), eventName(nextEvent(t, w)))
	ev := nextEvent(t, w)
	require.Equal(t, watch.Bookmark, ev.Type)
	u := ev.Object.(*unstructured.Unstructured)
	require.Equal(t, rv(5), u.GetResourceVersion())
	require.Equal(t, "true", u.GetAnnotations()[metav1.InitialEventsAnnotationKey])
	require.Equal(t, "ConfigMap", u.GetKind())
}

func TestWatchObjectsAreCopies(t *testing.T) {
	c := newCluster(t, "c")
	w1, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	defer w1.Stop()
	w2, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	defer w2.Stop()
	mustCreate(t, c, configMapGVR, configMap("prod", "cfg", map[string]any{"k": "v"}))

	a := nextEvent(t, w1).Object.(*unstructured.Unstructured)
	a.Object["data"].(map[string]any)["k"] = "mutated"
	b := nextEvent(t, w2).Object.(*unstructured.Unstructured)
	require.Equal(t, "v", nested(t, b, "data", "k"))
	got, err := c.Peek(configMapGVR, "prod", "cfg")
	require.NoError(t, err)
	require.Equal(t, "v", nested(t, got, "data", "k"))
}

func TestWatchEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(c *fake.Cluster, w watch.Interface, cancel context.CancelFunc)
	}{
		{"Stop", func(_ *fake.Cluster, w watch.Interface, _ context.CancelFunc) { w.Stop() }},
		{"ctx done", func(_ *fake.Cluster, _ watch.Interface, cancel context.CancelFunc) { cancel() }},
		{"partition", func(c *fake.Cluster, _ watch.Interface, _ context.CancelFunc) { c.Partition() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent() // only this subtest's goroutines count
			c := newCluster(t, "c")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ws []watch.Interface
			for range 10 {
				w, err := c.Watch(ctx, configMapGVR, "", metav1.ListOptions{})
				require.NoError(t, err)
				ws = append(ws, w)
			}
			mustCreate(t, c, configMapGVR, configMap("prod", "unread", nil)) // an undelivered event
			for _, w := range ws {
				tc.end(c, w, cancel)
			}
			for _, w := range ws {
				requireClosed(t, w)
				w.Stop() // idempotent
			}
			goleak.VerifyNone(t, ignore)
		})
	}
}

func TestWatchManyEventsKeepOrder(t *testing.T) {
	c := newCluster(t, "c")
	w, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	const n = 500
	for i := range n {
		mustCreate(t, c, configMapGVR, configMap("prod", "cm-"+strconv.Itoa(i), nil))
	}
	for i := range n {
		ev := nextEvent(t, w)
		require.Equal(t, rv(i+1), ev.Object.(metav1.Object).GetResourceVersion())
	}
}

func TestWatchHistoryRing(t *testing.T) {
	c := newCluster(t, "c")
	c.SetWatchHistory(3)
	write := func(n int) {
		for range n {
			mustCreate(t, c, configMapGVR, configMap("prod", "cm-"+strconv.FormatInt(c.ResourceVersion()+1, 10), nil))
		}
	}
	resumable := func(rv int) bool {
		w, err := c.Watch(testCtx(t), configMapGVR, "", metav1.ListOptions{ResourceVersion: strconv.Itoa(rv)})
		if err != nil {
			require.True(t, apierrors.IsResourceExpired(err), "Watch(%d) = %v", rv, err)
			return false
		}
		defer w.Stop()
		for want := rv + 1; want <= int(c.ResourceVersion()); want++ {
			require.Equal(t, strconv.Itoa(want), nextEvent(t, w).Object.(metav1.Object).GetResourceVersion())
		}
		return true
	}
	steps := []struct {
		name    string
		do      func()
		ok, old int // a resumable resourceVersion and the newest expired one
	}{
		{"wrapped several times", func() { write(10) }, baseRV + 7, baseRV + 6},
		{"grown: nothing comes back", func() { c.SetWatchHistory(5) }, baseRV + 7, baseRV + 6},
		{"grown and filled", func() { write(2) }, baseRV + 7, baseRV + 6},
		{"filled and wrapped", func() { write(1) }, baseRV + 8, baseRV + 7},
		{"shrunk", func() { c.SetWatchHistory(2) }, baseRV + 11, baseRV + 10},
	}
	for _, s := range steps {
		s.do()
		require.True(t, resumable(s.ok), "%s: resume from %d", s.name, s.ok)
		require.False(t, resumable(s.old), "%s: resume from %d", s.name, s.old)
	}
}

// TestClientGoInformer runs a real client-go informer against a fake cluster: its reflector
// lists, watches from the list's resourceVersion and relists on a broken watch, so this checks
// that the fake's list and watch semantics are the ones client-go relies on.
func TestClientGoInformer(t *testing.T) {
	c := newCluster(t, "c")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mustCreate(t, c, configMapGVR, configMap("prod", "before", nil))

	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return c.List(ctx, configMapGVR, "", opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, configMapGVR, "", opts)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	go inf.RunWithContext(ctx)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))

	keys := func() []string { return inf.GetStore().ListKeys() }
	require.ElementsMatch(t, []string{"prod/before"}, keys())

	mustCreate(t, c, configMapGVR, configMap("prod", "after", nil))
	require.NoError(t, c.DriftDelete(configMapGVR, "prod", "before"))
	require.Eventually(t, func() bool {
		k := keys()
		return len(k) == 1 && k[0] == "prod/after"
	}, 5*time.Second, 5*time.Millisecond, "informer follows the watch")

	// A partition breaks the watch; after healing, the reflector relists and catches up with
	// what happened meanwhile.
	c.Partition()
	require.NoError(t, c.Seed(configMap("prod", "during", nil)))
	c.Heal()
	require.Eventually(t, func() bool { return len(keys()) == 2 }, 10*time.Second, 10*time.Millisecond,
		"informer recovers after a partition")
}
