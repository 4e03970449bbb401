package sync_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// memberCleanup is a finalizer a member controller puts on the member object.
const memberCleanup = "example.com/cleanup"

var jobsGVR = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

// deleteActions returns the member deletes of the Syncer's type in cluster, with their options.
func (e *env) deleteActions(t *testing.T, cluster string, gvr schema.GroupVersionResource) []metav1.DeleteOptions {
	t.Helper()
	var out []metav1.DeleteOptions
	for _, a := range e.cluster(t, cluster).Actions() {
		if a.Verb == fake.VerbDelete && a.Resource == gvr {
			out = append(out, a.DeleteOptions)
		}
	}
	return out
}

// Member objects are deleted with propagationPolicy Background unless told otherwise: a kind
// whose own default orphans (batch/v1 Jobs) never leaves its Pods behind.
func TestMemberDeletesPropagateInBackground(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.clearActions()
	e.deleteFederated(t)
	e.reconcile(t)
	require.True(t, e.gone(t))
	for _, c := range clusterNames {
		dels := e.deleteActions(t, c, deployments)
		require.Len(t, dels, 1, c)
		require.NotNil(t, dels[0].PropagationPolicy, "%s: the policy is always set, never the kind's default", c)
		require.Equal(t, metav1.DeletePropagationBackground, *dels[0].PropagationPolicy, c)
	}
}

const batchJob = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedJob
metadata: {name: app-frontend, namespace: production}
spec:
  template:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: migrate, image: "busybox:1.36"}]
  placement:
    clusters: [{name: aws}, {name: gcp}]
`

func TestDeletedJobsOrphanNoPods(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.typ = federation.JobType
	s, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, Events: e.events})
	require.NoError(t, err)
	e.s = s
	e.apply(t, e.typ.FederatedGVR(), batchJob)
	e.reconcile(t)
	for _, c := range []string{"aws", "gcp"} {
		_, err := e.cluster(t, c).Peek(jobsGVR, key.Namespace, key.Name)
		require.NoError(t, err, c)
	}
	e.deleteFederated(t)
	e.reconcile(t)
	for _, c := range []string{"aws", "gcp"} {
		obj, err := e.cluster(t, c).Peek(jobsGVR, key.Namespace, key.Name)
		if err == nil {
			t.Fatalf("%s: the Job is still there, with finalizers %v: its Pods would be orphaned", c, obj.GetFinalizers())
		}
		require.True(t, apierrors.IsNotFound(err), "%s: %v", c, err)
	}
	require.True(t, e.gone(t))
}

// A member object that its own finalizers hold after the delete holds the federated object's
// finalizer too: the federated object goes once the member is NotFound, not when the delete
// was sent.
func TestDeletionWaitsForMembersTheirFinalizersHold(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		u.SetFinalizers(append(u.GetFinalizers(), memberCleanup))
	}))
	e.deleteFederated(t)
	res := e.reconcile(t)
	require.False(t, e.gone(t), "aws still has its object")
	require.Positive(t, res.RequeueAfter)
	m := e.member(t, "aws")
	require.NotNil(t, m)
	require.NotNil(t, m.GetDeletionTimestamp(), "the delete was sent")
	require.Equal(t, plan.ReasonWaitingForRemoval+"@0", propagation(e.fed(t))["aws"])
	for _, c := range []string{"gcp", "azure"} {
		require.Nil(t, e.member(t, c), c)
	}

	e.clock.Step(time.Minute)
	e.reconcile(t)
	require.False(t, e.gone(t), "a second pass still waits")

	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		u.SetFinalizers(slices.DeleteFunc(u.GetFinalizers(), func(f string) bool { return f == memberCleanup }))
	}))
	e.reconcile(t)
	require.True(t, e.gone(t), "released once the member object is gone")
	for _, ev := range e.events.list() {
		require.NotContains(t, ev, "MembersLeftBehind")
	}
}

func TestDeletionWaitForHeldMembersIsBounded(t *testing.T) {
	e := newEnv(t, fedsync.Options{DeletionTimeout: 10 * time.Minute})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.NoError(t, e.cluster(t, "aws").Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
		u.SetFinalizers(append(u.GetFinalizers(), memberCleanup))
	}))
	e.deleteFederated(t)
	e.reconcile(t)
	e.clock.Step(9 * time.Minute)
	e.reconcile(t)
	require.False(t, e.gone(t))
	e.clock.Step(time.Minute)
	e.reconcile(t)
	require.True(t, e.gone(t), "released after the timeout")
	last := e.events.list()[len(e.events.list())-1]
	require.Contains(t, last, "MembersLeftBehind")
	require.Contains(t, last, "aws ("+plan.ReasonWaitingForRemoval+")")
}

// DeletionTimeout counts from sync's first pass over the deletion, recorded on the object: an
// outage of the control plane longer than the timeout still leaves the clusters the whole
// grace period, and a restart does not start it again.
func TestDeletionTimeoutCountsFromSyncsFirstAttempt(t *testing.T) {
	e := newEnv(t, fedsync.Options{DeletionTimeout: 10 * time.Minute})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	e.deleteFederated(t)

	e.clock.Step(15 * time.Minute) // the control plane was down
	e.reconcile(t)
	require.False(t, e.gone(t), "sync just started waiting for azure")
	require.Nil(t, e.member(t, "aws"))

	e.clock.Step(6 * time.Minute)
	restarted, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, Events: e.events, DeletionTimeout: 10 * time.Minute})
	require.NoError(t, err)
	e.s = restarted
	e.reconcile(t)
	require.False(t, e.gone(t), "6 of the 10 minutes have passed")
	e.clock.Step(4 * time.Minute)
	e.reconcile(t)
	require.True(t, e.gone(t), "10 minutes after the first attempt, across the restart")
	require.Contains(t, e.events.list()[len(e.events.list())-1], "MembersLeftBehind")
}

// A deletion start copied from another object (older than the deletionTimestamp) is not this
// deletion's: the wait starts now.
func TestDeletionStartOlderThanTheDeletionIsReplaced(t *testing.T) {
	e := newEnv(t, fedsync.Options{DeletionTimeout: 10 * time.Minute})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.edit(t, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[federation.DeletionStartedAnnotation] = now.Add(-time.Hour).Format(time.RFC3339)
		u.SetAnnotations(a)
	})
	e.reconcile(t)
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	e.deleteFederated(t)
	e.reconcile(t)
	require.False(t, e.gone(t), "the wait has just begun")
	u, err := e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	require.Equal(t, now.Format(time.RFC3339), u.GetAnnotations()[federation.DeletionStartedAnnotation])
	e.clock.Step(10 * time.Minute)
	e.reconcile(t)
	require.True(t, e.gone(t))
}
