package sync_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
)

var jobs = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

const migrate = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedJob
metadata: {name: migrate, namespace: batch}
spec:
  template:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: migrate, image: "busybox:1.36"}]
  placement: {clusters: [{name: m1}, {name: m2}]}
`

// hold is a member controller's finalizer, which keeps m1's Job after the delete so its
// finalizers can be read: no garbage collector runs against these servers.
const hold = "example.com/hold"

// A batch/v1 Job orphans its Pods when deleted with the server's default policy (the orphan
// finalizer). Sync deletes in Background, so the Job carries no orphan finalizer, and the
// federated object is released only once each member Job is gone.
func TestJobDeletionOrphansNoPodsOnRealServers(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	// A namespace of its own: sync deletes the member namespace it created once the Jobs are
	// gone, and without a namespace controller it stays terminating.
	fedtest.Create(t, f.host, namespaces, `{apiVersion: v1, kind: Namespace, metadata: {name: batch}}`)
	s, err := fedsync.New(f.host, f.set, federation.JobType, fedsync.Options{})
	require.NoError(t, err)
	key := federation.Key{Namespace: "batch", Name: "migrate"}
	reconcile := func() { _, _ = s.Reconcile(ctx, key) } // a member client may not be built yet: retried
	job := func(cluster string) (*metav1.ObjectMeta, error) {
		u, err := f.members[cluster].Get(ctx, jobs, "batch", "migrate")
		if err != nil {
			return nil, err
		}
		return &metav1.ObjectMeta{Finalizers: u.GetFinalizers(), DeletionTimestamp: u.GetDeletionTimestamp(), UID: u.GetUID()}, nil
	}
	fedGone := func() bool {
		_, err := f.host.Get(ctx, federation.JobType.FederatedGVR(), "batch", "migrate")
		return apierrors.IsNotFound(err)
	}

	fedtest.Create(t, f.host, federation.JobType.FederatedGVR(), migrate)
	eventually(t, func() bool {
		reconcile()
		_, e1 := job("m1")
		_, e2 := job("m2")
		return e1 == nil && e2 == nil
	}, "the Jobs are created")
	u, err := f.members["m1"].Get(ctx, jobs, "batch", "migrate")
	require.NoError(t, err)
	u.SetFinalizers(append(u.GetFinalizers(), hold))
	_, err = f.members["m1"].Update(ctx, jobs, u)
	require.NoError(t, err)

	require.NoError(t, f.host.Delete(ctx, federation.JobType.FederatedGVR(), "batch", "migrate", metav1.DeleteOptions{}))
	eventually(t, func() bool {
		reconcile()
		m1, err := job("m1")
		return err == nil && m1.DeletionTimestamp != nil
	}, "m1's Job is deleted")
	m1, err := job("m1")
	require.NoError(t, err)
	require.Equal(t, []string{hold}, m1.Finalizers, "no orphan finalizer: the Job's Pods go with it")
	eventually(t, func() bool { reconcile(); _, err := job("m2"); return apierrors.IsNotFound(err) }, "m2's Job is gone at once")
	reconcile()
	require.False(t, fedGone(), "m1's Job is still there: the federated object waits for it")

	u, err = f.members["m1"].Get(ctx, jobs, "batch", "migrate")
	require.NoError(t, err)
	u.SetFinalizers(slices.DeleteFunc(u.GetFinalizers(), func(f string) bool { return f == hold }))
	_, err = f.members["m1"].Update(ctx, jobs, u)
	require.NoError(t, err)
	eventually(t, func() bool { reconcile(); return fedGone() }, "released once every member Job is gone")
}
