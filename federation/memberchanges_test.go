package federation_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// cachingSet is a ClusterSet with member caches: it records which registration was used.
type cachingSet struct {
	federation.ClusterSet
	used string
}

func (s *cachingSet) CachedReader(string, schema.GroupVersionResource) (federation.Reader, error) {
	return nil, nil
}

func (s *cachingSet) OnMemberChange(schema.GroupVersionResource, func(string, *unstructured.Unstructured)) func() {
	s.used = "copying"
	return func() {}
}

// readOnlySet offers the read-only registration too.
type readOnlySet struct{ cachingSet }

func (s *readOnlySet) OnMemberChangeReadOnly(schema.GroupVersionResource, func(string, *unstructured.Unstructured)) func() {
	s.used = "read-only"
	return func() {}
}

// plainSet has no member caches.
type plainSet struct{ federation.ClusterSet }

func TestWatchMemberChanges(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	fn := func(string, *unstructured.Unstructured) {}

	ro := &readOnlySet{}
	remove, ok := federation.WatchMemberChanges(ro, gvr, fn)
	require.True(t, ok)
	remove()
	require.Equal(t, "read-only", ro.used, "the copy-free registration when offered")

	c := &cachingSet{}
	remove, ok = federation.WatchMemberChanges(c, gvr, fn)
	require.True(t, ok)
	remove()
	require.Equal(t, "copying", c.used)

	remove, ok = federation.WatchMemberChanges(plainSet{}, gvr, fn)
	require.False(t, ok, "no member caches")
	remove() // does nothing, and does not panic
}
