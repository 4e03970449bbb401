package sync

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestRunPassesAgainForAChangeMadeWhileItWrote: a user's change that arrives while one of
// sync's own writes to the object is under way is not judged until that write is done (it
// might be the write's own version); once it is known to be someone else's, Run passes over
// the object again at once, with no clock step. Here the user narrows the placement to aws
// while the pass writes the status of the template change: the ConfigMap must leave gcp.
func TestRunPassesAgainForAChangeMadeWhileItWrote(t *testing.T) {
	f, s, where := settingsIn(t)
	typ, key := federation.ConfigMapType, federation.Key{Namespace: "prod", Name: "settings"}

	var armed, fired atomic.Bool
	f.Host.SetHooks(fake.Hooks{UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if gvr == typ.FederatedGVR() && armed.Load() && fired.CompareAndSwap(false, true) {
			require.NoError(t, f.Host.Drift(gvr, "prod", "settings", func(u *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}}, "spec", "placement", "clusters"))
			}))
			// Hold the write until Run has seen the user's change while it was under way.
			fedtest.Eventually(t, "Run sees the user's change while sync writes", func() bool {
				s.mu.Lock()
				defer s.mu.Unlock()
				r := s.objects[key]
				return r != nil && len(r.host.pending) > 0
			})
		}
		return next.UpdateStatus(ctx, gvr, obj)
	}})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	armed.Store(true)
	require.NoError(t, f.Host.Drift(typ.FederatedGVR(), "prod", "settings", func(u *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(u.Object, "debug", "spec", "template", "data", "level"))
	}))
	fedtest.Eventually(t, "the ConfigMap leaves gcp, with no clock step", func() bool {
		return fired.Load() && len(where()) == 1
	})
	require.Equal(t, []string{"aws"}, where())
}
