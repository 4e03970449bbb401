package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fedsync "github.com/fedkit/fedkit/sync"
)

// TestRecreatedObjectReplacesTheHistoryLeftBehind: a federated object deleted and created
// again under its name, with the same spec, meets the ControllerRevision of its predecessor
// (no garbage collector removed it: none runs on the fake host, and none does on a real one
// when the owner was deleted orphaning its dependents). It used to fail every pass with
// "exists and is not this snapshot"; the leftover is replaced and the new object propagates
// at revision 1.
func TestRecreatedObjectReplacesTheHistoryLeftBehind(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	old := e.fed(t).UID
	e.deleteFederated(t)
	for range 3 {
		if e.gone(t) {
			break
		}
		e.reconcile(t)
	}
	require.True(t, e.gone(t))
	revs, err := e.host.List(ctx, revisionsGVR, key.Namespace, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, revs.Items, 1, "the predecessor's history is still there")

	e.apply(t, e.typ.FederatedGVR(), frontend)
	require.NotEqual(t, old, e.fed(t).UID)
	e.reconcile(t)
	require.EqualValues(t, 1, e.fed(t).Status.SyncedRevision)
	revs, err = e.host.List(ctx, revisionsGVR, key.Namespace, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, revs.Items, 1)
	owners := revs.Items[0].GetOwnerReferences()
	require.Len(t, owners, 1)
	require.Equal(t, e.fed(t).UID, owners[0].UID, "the history is the new object's")
	require.NotNil(t, e.member(t, "aws"))
}
