package sync_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
)

// TestRunRevertsAnEditMadeWhileItsCreateWasInFlight: someone edits the member object after
// sync's create stored it but before the create returned to sync (the member cache notifies
// both while the write is in flight). The edit used to be taken for sync's own write and
// stayed until the next resync; now the write's end sees a version it did not write and
// passes over the object again. (Found by ExampleSyncer_Run under load.)
func TestRunRevertsAnEditMadeWhileItsCreateWasInFlight(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t, fedsync.Options{})
	stop := e.running(t)
	defer func() { require.NoError(t, stop()) }()
	// A first object makes sync hold every Cluster (a finalizer): that Cluster write would
	// otherwise bring a pass over every object and hide the bug.
	e.apply(t, e.typ.FederatedGVR(), strings.Replace(frontend, "name: app-frontend", "name: warm-up", 1))
	fedtest.Eventually(t,

		"the Clusters held", func() bool {
			c, err := e.host.Peek(federation.ClusterGVR, "", "azure")
			return err == nil && len(c.GetFinalizers()) > 0 && len(e.cluster(t, "azure").Actions()) > 0
		})

	aws := e.cluster(t, "aws")
	var edited atomic.Bool
	aws.SetHooks(fake.Hooks{Create: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, err := next.Create(ctx, gvr, obj)
		if err == nil && gvr == deployments && obj.GetName() == key.Name && edited.CompareAndSwap(false, true) {
			// The edit lands before the create returns (warm-up's own create may come late:
			// only app-frontend's counts). This runs on a sync writer: assert, not require.
			assert.NoError(t, aws.Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) { setMemberImage(u, "evil:1") }))
		}
		return out, err
	}})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	fedtest.Eventually(t, "the member created and edited", edited.Load)
	// The pass that reverts it may meet a host cache still behind the create pass's own
	// writes: a Conflict, retried after the loop's backoff on the fake clock, which the wait
	// steps, a minute at most (the resync is ten).
	var stepped time.Duration
	fedtest.Eventually(t,

		"the edit reverted without waiting for a resync", func() bool {
			if m := e.member(t, "aws"); m != nil && image(t, m) == frontendImage {
				return true
			}
			if stepped < time.Minute {
				e.clock.Step(50 * time.Millisecond)
				stepped += 50 * time.Millisecond
			}
			return false
		})

}
