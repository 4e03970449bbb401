package sync_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestRecreatedObjectReplacesTheHistoryLeftBehind: a federated object deleted and created
// again under its name, with the same spec, meets the ControllerRevision of its predecessor
// (no garbage collector removed it: none runs on the fake host, and none does on a real one
// when the owner was deleted orphaning its dependents). It used to fail every pass with
// "exists and is not this snapshot"; the leftover is replaced and the new object propagates
// at revision 1.
func TestRecreatedObjectReplacesTheHistoryLeftBehind(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	guard := fedtest.NewDeleteGuard() // the member copies and the history left behind go through the gate
	guard.Watch(e.host, "")
	for _, m := range e.fleet.Names() {
		c, _ := e.fleet.Member(m)
		guard.Watch(c, m)
	}
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
	guard.Check(t, "github.com/fedkit/fedkit/sync")
}

// webhookDenial is what the API server returns when a validating admission webhook denies a
// request.
func webhookDenial() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest,
		Message: `admission webhook "history.policy.example.com" denied the request: ControllerRevisions are frozen`,
	}}
}

// refuseRevisions returns hooks that refuse every create or patch of a ControllerRevision with
// err, and pass everything else through.
func refuseRevisions(verb fake.Verb, err error) fake.Hooks {
	var h fake.Hooks
	switch verb {
	case fake.VerbCreate:
		h.Create = func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if gvr == revisionsGVR {
				return nil, err
			}
			return next.Create(ctx, gvr, obj)
		}
	case fake.VerbPatch:
		h.Patch = func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
			if gvr == revisionsGVR {
				return nil, err
			}
			return next.Patch(ctx, gvr, namespace, name, pt, data)
		}
	}
	return h
}

// TestRefusedHistoryWriteIsReported: a host that refuses a write of the revision history
// (RBAC, a quota, an admission webhook) stops the pass before anything is propagated, and
// says so: Propagated=False with ReasonHistoryWriteFailed and a message naming the write and
// the host's error, a Warning event, and an error that is retried (the refusal is lifted on
// the host, not by a change of the object). Once the host accepts the write, the next pass
// propagates. A refusal used to be only the pass's error: the condition went on saying
// whatever it said before (True, for the old revision), and nothing on the object told why
// a new spec did not go out.
func TestRefusedHistoryWriteIsReported(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, "",
		errors.New(`User "system:serviceaccount:fedkit:sync" cannot create resource "controllerrevisions" in API group "apps" in the namespace "production"`))
	quota := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, "",
		errors.New("exceeded quota: history, requested: count/controllerrevisions.apps=1, used: count/controllerrevisions.apps=10, limited: count/controllerrevisions.apps=10"))
	for _, tc := range []struct {
		name  string
		verb  fake.Verb
		err   error
		setup func(t *testing.T, e *env) // the spec whose history write is refused
		write string
	}{
		{name: "RBAC refuses a new revision", verb: fake.VerbCreate, err: forbidden, write: "create ControllerRevision production/app-frontend-",
			setup: func(t *testing.T, e *env) { e.apply(t, e.typ.FederatedGVR(), frontend) }},
		{name: "quota refuses a new revision", verb: fake.VerbCreate, err: quota, write: "create ControllerRevision production/app-frontend-",
			setup: func(t *testing.T, e *env) {
				e.apply(t, e.typ.FederatedGVR(), frontend)
				e.converge(t, 3)
				e.edit(t, setImage("nginx:1.22"))
			}},
		{name: "a webhook refuses to renumber an old snapshot that came back", verb: fake.VerbPatch, err: webhookDenial(), write: "update ControllerRevision production/app-frontend-",
			setup: func(t *testing.T, e *env) {
				e.apply(t, e.typ.FederatedGVR(), frontend)
				e.converge(t, 3)
				e.edit(t, setImage("nginx:1.22"))
				e.converge(t, 3)
				e.edit(t, setImage(frontendImage)) // revision 1's snapshot, renumbered to 3
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			tc.setup(t, e)
			before := e.fed(t).Status.SyncedRevision
			e.host.SetHooks(refuseRevisions(tc.verb, tc.err))
			seen := len(e.events.list())

			_, err := e.s.Reconcile(ctx, key)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.err)
			require.False(t, federation.IsTerminal(err), "a refusal is lifted on the host: the pass is retried")
			fed := e.fed(t)
			cond := propagated(fed)
			require.Equal(t, metav1.ConditionFalse, cond.Status)
			require.Equal(t, plan.ReasonHistoryWriteFailed, cond.Reason)
			require.Contains(t, cond.Message, tc.write)
			require.Contains(t, cond.Message, tc.err.Error())
			require.Equal(t, fed.Generation, cond.ObservedGeneration)
			require.Equal(t, before, fed.Status.SyncedRevision, "nothing was propagated")
			warned := false
			for _, ev := range e.events.list()[seen:] {
				warned = warned || (strings.Contains(ev, "Warning "+plan.ReasonHistoryWriteFailed) && strings.Contains(ev, tc.write))
			}
			require.True(t, warned, "a Warning event names the write: %v", e.events.list())

			e.host.SetHooks(fake.Hooks{})
			e.converge(t, 3)
			fed = e.fed(t)
			require.Equal(t, metav1.ConditionTrue, propagated(fed).Status)
			require.Greater(t, fed.Status.SyncedRevision, before)
		})
	}
}
