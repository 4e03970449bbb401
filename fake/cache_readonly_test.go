package fake_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

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
