package statuswrite_test

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/statuswrite"
)

var gvr = federation.ConfigMapType.FederatedGVR()

// setField returns a mutation setting status[k] = v, as a loop sets the fields it owns.
func setField(k string, v any) func(map[string]any) error {
	return func(status map[string]any) error {
		status[k] = v
		return nil
	}
}

// harness is a fake host holding default/cfg, a Writer on a fake clock, and Run running.
type harness struct {
	host  *fake.Cluster
	clock *clocktesting.FakeClock
	w     *statuswrite.Writer
}

func start(t *testing.T) *harness {
	t.Helper()
	h := &harness{host: fake.NewHost("host"), clock: clocktesting.NewFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))}
	h.host.SetClock(h.clock)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap,
metadata: {name: cfg, namespace: default}, spec: {template: {data: {a: b}}}}`), &u.Object))
	_, err := h.host.Create(context.Background(), gvr, u)
	require.NoError(t, err)
	h.host.ClearActions()
	h.w = statuswrite.New(h.host, statuswrite.Options{Window: time.Second, Clock: h.clock})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return h
}

func (h *harness) get(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u, err := h.host.Get(context.Background(), gvr, "default", "cfg")
	require.NoError(t, err)
	return u
}

// statusWrites counts the status updates the host has seen.
func (h *harness) statusWrites() int {
	n := 0
	for _, a := range h.host.Actions() {
		if a.Verb == fake.VerbUpdateStatus {
			n++
		}
	}
	return n
}

// stepUntil steps the fake clock by a second until cond holds (bounded).
func (h *harness) stepUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 100 {
		if cond() {
			return
		}
		h.clock.Step(time.Second)
		for range 100 {
			if cond() {
				return
			}
			time.Sleep(time.Millisecond) // the Writer's goroutine runs in real time
		}
	}
	t.Fatalf("%s: not after 100 steps", what)
}

func status(u *unstructured.Unstructured) map[string]any {
	m, _ := u.Object["status"].(map[string]any)
	return m
}

// Three loops' changes to one object within the window are one write holding each loop's
// field; before it, Pending shows them all; the host saw no write until the window ended.
func TestMergesLoopsIntoOneWrite(t *testing.T) {
	h := start(t)
	u := h.get(t)
	require.NoError(t, h.w.WriteStatus("scheduler", gvr, u, setField("schedule", map[string]any{"clusters": []any{}})))
	require.NoError(t, h.w.WriteStatus("sync", gvr, u, setField("syncedRevision", int64(1))))
	require.NoError(t, h.w.WriteStatus("status", gvr, u, setField("aggregated", map[string]any{"ready": true})))

	want := map[string]any{"schedule": map[string]any{"clusters": []any{}}, "syncedRevision": int64(1), "aggregated": map[string]any{"ready": true}}
	if diff := cmp.Diff(want, status(h.w.Pending(gvr, u))); diff != "" {
		t.Errorf("Pending status (-want +got):\n%s", diff)
	}
	require.Equal(t, 0, h.statusWrites(), "no write before the window ends")

	h.stepUntil(t, "the merged write", func() bool { return h.statusWrites() == 1 })
	if diff := cmp.Diff(want, status(h.get(t))); diff != "" {
		t.Errorf("written status (-want +got):\n%s", diff)
	}
	// Nothing pending: further steps write nothing.
	h.clock.Step(5 * time.Second)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, 1, h.statusWrites())
}

// A change that changes nothing is not written.
func TestUnchangedIsNotWritten(t *testing.T) {
	h := start(t)
	require.NoError(t, h.w.WriteStatus("sync", gvr, h.get(t), setField("syncedRevision", int64(1))))
	h.stepUntil(t, "the first write", func() bool { return h.statusWrites() == 1 })
	require.NoError(t, h.w.WriteStatus("sync", gvr, h.get(t), setField("syncedRevision", int64(1))))
	h.clock.Step(5 * time.Second)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, 1, h.statusWrites())
}

// Someone else's write meanwhile (sync's metadata patch) is a Conflict: the Writer reads the
// object again and applies every loop's change on it, keeping the other write.
func TestConflictAppliesChangesAgain(t *testing.T) {
	h := start(t)
	u := h.get(t)
	require.NoError(t, h.w.WriteStatus("scheduler", gvr, u, setField("schedule", map[string]any{"clusters": []any{}})))
	_, err := h.host.Patch(context.Background(), gvr, "default", "cfg", types.MergePatchType, []byte(`{"metadata":{"finalizers":["x/y"]}}`))
	require.NoError(t, err)
	require.NoError(t, h.w.WriteStatus("sync", gvr, u, setField("syncedRevision", int64(1))))
	h.stepUntil(t, "written", func() bool { return len(status(h.get(t))) == 2 })
	got := h.get(t)
	require.Equal(t, []string{"x/y"}, got.GetFinalizers())
	if diff := cmp.Diff(map[string]any{"schedule": map[string]any{"clusters": []any{}}, "syncedRevision": int64(1)}, status(got)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// A mutation that fails is refused at once, and nothing is kept.
func TestFailingMutationRefused(t *testing.T) {
	h := start(t)
	err := h.w.WriteStatus("status", gvr, h.get(t), func(map[string]any) error { return errBoom })
	require.ErrorIs(t, err, errBoom)
	h.clock.Step(5 * time.Second)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, 0, h.statusWrites())
}

// Notify tells the other loops of a change, not the loop that made it.
func TestNotifyOtherLoops(t *testing.T) {
	h := start(t)
	var got []string
	h.w.Notify(context.Background(), "status", gvr, func(from string, key federation.Key) { got = append(got, from+" "+key.String()) })
	require.NoError(t, h.w.WriteStatus("sync", gvr, h.get(t), setField("syncedRevision", int64(1))))
	require.NoError(t, h.w.WriteStatus("status", gvr, h.get(t), setField("aggregated", map[string]any{})))
	require.Equal(t, []string{"sync default/cfg"}, got)
}

type boom struct{}

func (boom) Error() string { return "boom" }

var errBoom error = boom{}

// Until sync has recorded the object's generation (status.observedGeneration), the other
// loops' changes wait for sync's, up to maxSyncHolds windows: a new object (or generation) costs
// one status write, not the scheduler's and then sync's. An object sync has observed is
// written a window after the change, as before.
func TestHeldForSyncsObservedGeneration(t *testing.T) {
	h := start(t)
	u := h.get(t)
	require.EqualValues(t, 1, u.GetGeneration())
	require.NoError(t, h.w.WriteStatus("scheduler", gvr, u, setField("schedule", map[string]any{"clusters": []any{}})))
	for range 3 {
		h.clock.Step(time.Second)
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, 0, h.statusWrites(), "the scheduler's change was written before sync's came")
	require.NoError(t, h.w.WriteStatus("sync", gvr, u, setField("observedGeneration", int64(1))))
	h.stepUntil(t, "the merged write", func() bool { return h.statusWrites() == 1 })
	want := map[string]any{"schedule": map[string]any{"clusters": []any{}}, "observedGeneration": int64(1)}
	if diff := cmp.Diff(want, status(h.get(t))); diff != "" {
		t.Errorf("written status (-want +got):\n%s", diff)
	}

	// Observed: the next change goes after one window.
	require.NoError(t, h.w.WriteStatus("status", gvr, h.get(t), setField("aggregated", map[string]any{"ready": true})))
	h.clock.Step(time.Second)
	// The host holds it (the fake records a call before it stores it: a patch sent between the
	// two would make the write conflict, and its retry count as a third write).
	require.Eventually(t, func() bool { return status(h.get(t))["aggregated"] != nil }, 10*time.Second, time.Millisecond)
	require.Equal(t, 2, h.statusWrites())

	// A new generation sync never observes is written anyway, after maxSyncHolds windows.
	_, err := h.host.Patch(context.Background(), gvr, "default", "cfg", types.MergePatchType, []byte(`{"spec":{"template":{"data":{"a":"c"}}}}`))
	require.NoError(t, err)
	require.EqualValues(t, 2, h.get(t).GetGeneration())
	require.NoError(t, h.w.WriteStatus("scheduler", gvr, h.get(t), setField("schedule", map[string]any{"clusters": []any{"x"}})))
	for range 14 {
		h.clock.Step(time.Second)
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, 2, h.statusWrites(), "written before maxSyncHolds windows")
	h.clock.Step(time.Second)
	require.Eventually(t, func() bool { return h.statusWrites() == 3 }, 10*time.Second, time.Millisecond)
}

// While the Writer's write is on its way to the host, Pending still shows the changes it
// carries, and so does a change another loop hands meanwhile: a loop that read the object
// from its cache (which has not seen the write yet) never sees the status go back to what
// it was before the changes. (The dependencies loop once read a workload's schedule as gone
// during that moment and took its ConfigMap out of a cluster, to put it back right after.)
func TestPendingShowsAWriteInFlight(t *testing.T) {
	h := start(t)
	cached := h.get(t) // what the loops' cache holds until it sees the write
	entered, release := make(chan struct{}), make(chan struct{})
	var releaseOnce gosync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	first := true
	h.host.SetHooks(fake.Hooks{UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if first {
			first = false
			close(entered)
			<-release
		}
		return next.UpdateStatus(ctx, gvr, obj)
	}})
	schedule := map[string]any{"clusters": []any{map[string]any{"name": "eu"}}}
	require.NoError(t, h.w.WriteStatus("scheduler", gvr, cached, setField("schedule", schedule)))
	require.NoError(t, h.w.WriteStatus("sync", gvr, cached, setField("observedGeneration", int64(1))))
	h.clock.Step(time.Second)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the write did not start")
	}

	// In flight: the changes are neither pending nor written yet.
	if diff := cmp.Diff(map[string]any{"schedule": schedule, "observedGeneration": int64(1)}, status(h.w.Pending(gvr, cached))); diff != "" {
		t.Errorf("Pending during the write (-want +got):\n%s", diff)
	}
	require.NoError(t, h.w.WriteStatus("status", gvr, cached, setField("aggregated", map[string]any{"ready": true})))
	both := map[string]any{"schedule": schedule, "observedGeneration": int64(1), "aggregated": map[string]any{"ready": true}}
	if diff := cmp.Diff(both, status(h.w.Pending(gvr, cached))); diff != "" {
		t.Errorf("Pending after another loop's change during the write (-want +got):\n%s", diff)
	}

	releaseOnce.Do(func() { close(release) })
	h.stepUntil(t, "both written", func() bool { return len(status(h.get(t))) == 3 })
	if diff := cmp.Diff(both, status(h.get(t))); diff != "" {
		t.Errorf("written status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(both, status(h.w.Pending(gvr, cached))); diff != "" {
		t.Errorf("Pending of the stale copy after the writes (-want +got):\n%s", diff)
	}
}

// A loop that reads the object live (the scheduler after a Conflict, the collector) has
// caught up with the Writer's last write; a loop reading the cache, still behind, must still
// see that write through Pending, not the status from before it. (The dependencies loop read
// a workload's schedule as gone once the scheduler's live read had made the Writer forget its
// write, and narrowed the workload's ConfigMap for a moment.)
func TestPendingKeepsTheLastWriteForEveryReader(t *testing.T) {
	h := start(t)
	cached := h.get(t)
	schedule := map[string]any{"clusters": []any{map[string]any{"name": "eu"}}}
	require.NoError(t, h.w.WriteStatus("scheduler", gvr, cached, setField("schedule", schedule)))
	require.NoError(t, h.w.WriteStatus("sync", gvr, cached, setField("observedGeneration", int64(1))))
	h.stepUntil(t, "written", func() bool { return h.statusWrites() == 1 })
	want := map[string]any{"schedule": schedule, "observedGeneration": int64(1)}

	live := h.w.Pending(gvr, h.get(t))
	if diff := cmp.Diff(want, status(live)); diff != "" {
		t.Errorf("Pending of the live copy (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, status(h.w.Pending(gvr, cached))); diff != "" {
		t.Errorf("Pending of the cache's copy, behind, after a live read (-want +got):\n%s", diff)
	}
}

// The host's answer to a write no loop reads back is forgotten five windows after it: the
// Writer holds copies of recent writes, not one of every object it wrote. Until then, a copy
// from before the write still reads as the write; after, Pending returns it as it is.
func TestWrittenCopyForgottenAfterFiveWindows(t *testing.T) {
	h := start(t)
	cached := h.get(t)
	require.NoError(t, h.w.WriteStatus("sync", gvr, cached, setField("observedGeneration", int64(1))))
	h.stepUntil(t, "written", func() bool { return h.statusWrites() == 1 })
	if diff := cmp.Diff(map[string]any{"observedGeneration": int64(1)}, status(h.w.Pending(gvr, cached))); diff != "" {
		t.Errorf("Pending of the copy from before the write, just after it (-want +got):\n%s", diff)
	}
	h.stepUntil(t, "forgotten", func() bool { return h.w.Pending(gvr, cached) == cached })
	if got := h.statusWrites(); got != 1 {
		t.Errorf("%d status writes, want 1", got)
	}
}

// PendingShared serves readers of a cache's own objects: it returns the object itself when
// nothing is pending, else a copy with the changes; it never changes the object, nor keeps
// it (a newer copy the pending changes move to is copied first), so a reader pays one copy
// where reading a copy and then Pending paid two.
func TestPendingSharedNeitherChangesNorKeeps(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	u := h.get(t)
	got, copied := h.w.PendingShared(gvr, u)
	require.Same(t, u, got, "nothing pending: the object itself")
	require.False(t, copied)

	require.NoError(t, h.w.WriteStatus("sync", gvr, h.get(t), setField("syncedRevision", int64(1))))
	before := u.DeepCopy()
	got, copied = h.w.PendingShared(gvr, u)
	require.True(t, copied)
	require.NotSame(t, u, got)
	require.Equal(t, map[string]any{"syncedRevision": int64(1)}, status(got), "the pending change applied")
	require.Equal(t, before, u, "the shared object is unchanged")

	// Someone else's write: the pending change moves to the newer copy, which is not kept.
	edited := h.get(t)
	edited.Object["spec"] = map[string]any{"template": map[string]any{"data": map[string]any{"a": "c"}}}
	_, err := h.host.Update(ctx, gvr, edited)
	require.NoError(t, err)
	shared := h.get(t)
	got, copied = h.w.PendingShared(gvr, shared)
	require.True(t, copied)
	a, _, _ := unstructured.NestedString(got.Object, "spec", "template", "data", "a")
	require.Equal(t, "c", a, "the newer copy's spec")
	require.Equal(t, map[string]any{"syncedRevision": int64(1)}, status(got))
	shared.Object["spec"].(map[string]any)["template"] = "changed after the read"
	a, _, _ = unstructured.NestedString(h.w.Pending(gvr, h.get(t)).Object, "spec", "template", "data", "a")
	require.Equal(t, "c", a, "the Writer kept a copy of the shared object, not the object")
}

// Drop forgets what is pending, and a write on its way that fails is not tried again: a
// control plane that lost its Lease writes nothing more. Changes handed afterwards are
// written as before.
func TestDropForgetsPendingChanges(t *testing.T) {
	h := start(t)
	u := h.get(t)
	require.NoError(t, h.w.WriteStatus("scheduler", gvr, u, setField("schedule", map[string]any{"clusters": []any{}})))
	h.w.Drop()
	require.Empty(t, status(h.w.Pending(gvr, u)), "Pending after Drop")
	h.clock.Step(5 * time.Second)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, 0, h.statusWrites(), "a dropped change is not written")

	// A write under way when Drop is called fails: it is not tried again.
	entered, release := make(chan struct{}), make(chan struct{})
	var once gosync.Once
	h.host.SetHooks(fake.Hooks{UpdateStatus: func(ctx context.Context, next federation.ClusterClient, g schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		once.Do(func() { close(entered) })
		<-release
		return nil, apierrors.NewServiceUnavailable("the host is going away")
	}})
	require.NoError(t, h.w.WriteStatus("sync", gvr, u, setField("syncedRevision", int64(1))))
	for steps := 0; ; steps++ {
		require.Less(t, steps, 500, "the write never started")
		h.clock.Step(time.Second)
		select {
		case <-entered:
		case <-time.After(20 * time.Millisecond):
			continue
		}
		break
	}
	h.w.Drop()
	close(release)
	time.Sleep(20 * time.Millisecond)
	h.host.SetHooks(fake.Hooks{})
	h.clock.Step(time.Minute)
	time.Sleep(20 * time.Millisecond)
	require.Empty(t, status(h.get(t)), "the failed write is not tried again")
	require.Empty(t, status(h.w.Pending(gvr, h.get(t))))

	require.NoError(t, h.w.WriteStatus("sync", gvr, h.get(t), setField("syncedRevision", int64(2))))
	h.stepUntil(t, "a change after Drop written", func() bool { return len(status(h.get(t))) == 1 })
}
