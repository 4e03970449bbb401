package status_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// TestCollectorOwnsOnlyItsFields: a write replaces the Collector's fields and leaves every
// other loop's (the schedule, sync's entry fields, other conditions, unknown fields) as read.
func TestCollectorOwnsOnlyItsFields(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b"}, []int64{1, 1})
	u, err := e.host.Get(ctx, fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	st := u.Object["status"].(map[string]any)
	st["schedule"] = map[string]any{"clusters": []any{map[string]any{"name": "a", "replicas": int64(1)}}}
	st["syncedRevision"] = int64(1)
	st["conditions"] = []any{
		map[string]any{"type": "Scheduled", "status": "True", "reason": "Scheduled", "message": "", "lastTransitionTime": "2026-11-30T11:00:00Z"},
		map[string]any{"type": "Propagated", "status": "False", "reason": "NotPropagated", "message": "waiting", "lastTransitionTime": "2026-11-30T11:00:00Z"},
	}
	entry := st["clusters"].([]any)[0].(map[string]any)
	entry["propagation"], entry["message"], entry["futureField"] = "UpdateFailed", "boom", "kept"
	_, err = e.host.UpdateStatus(ctx, fedGVR, u)
	require.NoError(t, err)

	e.reconcile(t)
	got, err := e.host.Peek(fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	gst := got.Object["status"].(map[string]any)
	require.Equal(t, st["schedule"], gst["schedule"])
	require.Equal(t, int64(1), gst["syncedRevision"])
	conds := gst["conditions"].([]any)
	require.Len(t, conds, 3)
	require.Equal(t, st["conditions"].([]any)[0], conds[0])
	require.Equal(t, st["conditions"].([]any)[1], conds[1])
	require.Equal(t, "Ready", conds[2].(map[string]any)["type"])
	gentry := gst["clusters"].([]any)[0].(map[string]any)
	for k, v := range map[string]any{"name": "a", "propagation": "UpdateFailed", "message": "boom", "revision": int64(1), "futureField": "kept", "replicas": int64(1)} {
		require.Equal(t, v, gentry[k], k)
	}
}

// TestCollectorConflict: a Conflict (another loop wrote first) makes the pass read again and
// re-apply on the object as it now is; sync's entry added meanwhile is kept and filled.
func TestCollectorConflict(t *testing.T) {
	e := newEnv(t, status.Options{}, "a", "b", "c")
	e.federate(t, []string{"a", "b"}, []int64{1, 2})
	e.member(t, "c", 4)
	e.fleet.Tick()
	once := false
	e.host.SetHooks(fake.Hooks{UpdateStatus: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if gvr == fedGVR && !once {
			once = true
			e.list(t, nil, []string{"a", "b", "c"}) // sync lists c before our write lands
		}
		return next.UpdateStatus(ctx, gvr, obj)
	}})
	e.reconcile(t)
	fed := e.get(t)
	require.Len(t, fed.Status.Clusters, 3)
	require.Equal(t, int64(7), fed.Status.Aggregated.Replicas)
	require.Equal(t, int64(4), *fed.Status.Clusters[2].Replicas)

	// Conflicts that never end fail the pass with a Conflict, for the loop to retry.
	e.host.SetHooks(fake.Hooks{})
	e.host.FailOn(fake.VerbUpdateStatus, apierrors.NewConflict(fedGVR.GroupResource(), key.Name, errors.New("busy")), 0)
	e.member(t, "a", 3)
	e.step(30 * time.Second)
	e.host.ClearActions()
	_, err := e.c.Reconcile(ctx, key)
	require.True(t, apierrors.IsConflict(err), "%v", err)
	require.Equal(t, 3, e.writes(), "three attempts")
}

// TestCollectorMemberProblems: a missing member object, one the federation does not manage,
// and one with an invalid status are fresh observations that are not ready, each named in the
// Ready condition with why.
func TestCollectorMemberProblems(t *testing.T) {
	e := newEnv(t, status.Options{}, "a", "b", "c", "d")
	e.federate(t, []string{"a", "b", "c", "d"}, []int64{1, 1, 1, 1})
	b, _ := e.fleet.Member("b")
	require.NoError(t, b.DriftDelete(depGVR, key.Namespace, key.Name))
	c, _ := e.fleet.Member("c")
	require.NoError(t, c.Drift(depGVR, key.Namespace, key.Name, func(o *unstructured.Unstructured) { o.SetLabels(nil) }))
	d, _ := e.fleet.Member("d")
	d.SetHooks(fake.Hooks{Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
		u, err := next.Get(ctx, gvr, ns, name)
		if err == nil {
			u.Object["status"] = map[string]any{"replicas": "many"}
		}
		return u, err
	}})

	e.reconcile(t)
	fed := e.get(t)
	ready := readyOf(fed)
	require.Equal(t, metav1.ConditionFalse, ready.Status)
	require.Equal(t, status.ReasonNotReady, ready.Reason)
	require.Equal(t, "not ready: b, c: the member object does not exist; "+
		"d: invalid member status: status.replicas: want an integer, got a string", ready.Message)
	require.Equal(t, &federation.AggregatedStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1, Clusters: 4}, fed.Status.Aggregated)
	for _, i := range []int{1, 2, 3} {
		require.False(t, fed.Status.Clusters[i].Stale)
		require.Nil(t, fed.Status.Clusters[i].Replicas)
	}
}

// TestCollectorBadFederatedObject: a status that does not decode is a terminal error naming
// the object; a missing object is forgotten.
func TestCollectorBadFederatedObject(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a"}, []int64{1})
	e.host.SetHooks(fake.Hooks{Get: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
		u, err := next.Get(ctx, gvr, ns, name)
		if err == nil && gvr == fedGVR {
			u.Object["status"] = map[string]any{"clusters": "a,b"}
		}
		return u, err
	}})
	_, err := e.c.Reconcile(ctx, key)
	require.True(t, federation.IsTerminal(err), "%v", err)
	require.ErrorIs(t, err, status.ErrInvalidStatus)
	require.Contains(t, err.Error(), "FederatedDeployment default/web")

	e.host.SetHooks(fake.Hooks{})
	require.NoError(t, e.host.Delete(ctx, fedGVR, key.Namespace, key.Name, metav1.DeleteOptions{}))
	res, err := e.c.Reconcile(ctx, key)
	require.NoError(t, err)
	require.Zero(t, res.RequeueAfter, "a gone object is not pulled again")
}

// TestCollectorReadTimeout: a member that does not answer within ReadTimeout (on the
// injected clock) is a failed read, not a stuck pass.
func TestCollectorReadTimeout(t *testing.T) {
	// One read at a time, so that the two timers the test waits for are b's.
	e := newEnv(t, status.Options{ReadTimeout: 5 * time.Second, ClusterConcurrency: 1})
	e.federate(t, []string{"a", "b", "c"}, []int64{1, 1, 1})
	e.reconcile(t)
	b, _ := e.fleet.Member("b")
	b.SetLatency(fake.VerbGet, time.Minute)

	e.step(100 * time.Second) // beyond StaleAfter: b's data is stale unless read now
	done := make(chan error, 1)
	go func() {
		_, err := e.c.Reconcile(ctx, key)
		done <- err
	}()
	for e.clock.Waiters() < 2 { // b's latency timer and the read's timeout
		runtime.Gosched()
	}
	e.clock.Step(5 * time.Second)
	require.NoError(t, <-done)
	require.True(t, e.get(t).Status.Clusters[1].Stale)
}
