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

// countingFleet is the fake fleet counting the notification registrations.
type countingFleet struct {
	*fake.Fleet
	copying, readOnly atomic.Int32
}

func (f *countingFleet) OnMemberChange(gvr schema.GroupVersionResource, fn func(string, *unstructured.Unstructured)) func() {
	f.copying.Add(1)
	return f.Fleet.OnMemberChange(gvr, fn)
}

func (f *countingFleet) OnMemberChangeReadOnly(gvr schema.GroupVersionResource, fn func(string, *unstructured.Unstructured)) func() {
	f.readOnly.Add(1)
	return f.Fleet.OnMemberChangeReadOnly(gvr, fn)
}

// copyingOnly is a cluster set with member caches but no read-only notifications.
type copyingOnly struct {
	federation.ClusterSet
	federation.MemberCache
}

// TestRunMemberNotifications: Run takes the read-only notifications when the cluster set
// offers them (no copy of the object per change), the copying ones otherwise, for its type and
// for member Namespaces, and reverts a member's drift at once either way.
func TestRunMemberNotifications(t *testing.T) {
	for _, tc := range []struct {
		name                string
		hideReadOnly        bool
		wantCopying, wantRO int32
	}{
		// Two registrations: the target type's objects, and member Namespaces (objects
		// waiting for theirs), of one kind.
		{name: "read-only offered", wantRO: 2},
		{name: "copying only", hideReadOnly: true, wantCopying: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			e := newEnv(t, fedsync.Options{})
			counting := &countingFleet{Fleet: e.fleet}
			var set federation.ClusterSet = counting
			if tc.hideReadOnly {
				set = copyingOnly{ClusterSet: counting, MemberCache: counting}
				_, ok := set.(federation.ReadOnlyMemberChanges)
				require.False(t, ok)
			}
			s, err := fedsync.New(e.host, set, e.typ, fedsync.Options{Clock: e.clock, Events: e.events})
			require.NoError(t, err)
			e.s = s
			stop := e.running(t)
			e.apply(t, e.typ.FederatedGVR(), frontend)
			inSync := func() bool { m := e.member(t, "aws"); return m != nil && image(t, m) == frontendImage }
			fedtest.Eventually(t, "propagated", inSync)
			require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
				setMemberImage(u, "evil:1")
			}))
			fedtest.Eventually(t, "drift reverted at once", inSync)
			require.NoError(t, stop())
			require.Equal(t, tc.wantCopying, counting.copying.Load(), "copying registrations")
			require.Equal(t, tc.wantRO, counting.readOnly.Load(), "read-only registrations")
		})
	}
}

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
