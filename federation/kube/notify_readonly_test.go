package kube

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/fedkit/fedkit/federation"
)

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
