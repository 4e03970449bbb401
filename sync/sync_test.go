package sync_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

func TestCreatePropagatesToEveryPlacedCluster(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)

	for _, c := range clusterNames {
		m := e.member(t, c)
		require.NotNil(t, m, c)
		require.Equal(t, frontendImage, image(t, m))
		require.Equal(t, "fedkit", m.GetLabels()[federation.ManagedByLabel])
		require.Equal(t, "app-frontend", m.GetLabels()[federation.FederatedNameLabel])
		require.Equal(t, "1", m.GetAnnotations()[federation.RevisionAnnotation])
	}
	require.EqualValues(t, 4, replicas(e.member(t, "gcp")), "override")
	require.EqualValues(t, 3, replicas(e.member(t, "aws")))

	fed := e.fed(t)
	require.Contains(t, fed.Finalizers, federation.SyncFinalizer)
	require.Equal(t, "1", fed.Annotations[federation.RevisionAnnotation])
	want := map[string]string{"aws": "@1", "azure": "@1", "gcp": "@1"}
	if diff := cmp.Diff(want, propagation(fed)); diff != "" {
		t.Errorf("status.clusters (-want +got):\n%s", diff)
	}
	require.EqualValues(t, 1, fed.Status.SyncedRevision)
	require.Equal(t, metav1.ConditionTrue, propagated(fed).Status, propagated(fed).Message)
	require.Equal(t, fed.Generation, fed.Status.ObservedGeneration)
	// The member namespace did not exist: sync created it, marked as its own.
	ns, err := e.cluster(t, "aws").Peek(namespaces, "", "production")
	require.NoError(t, err)
	require.Equal(t, "true", ns.GetAnnotations()[plan.CreatedNamespaceAnnotation])
	// One ControllerRevision records the snapshot, owned by the federated object.
	revs := e.host.Objects(revisionsGVR)
	require.Len(t, revs, 1)
	require.EqualValues(t, 1, revs[0].Object["revision"])
	require.Equal(t, fed.UID, revs[0].GetOwnerReferences()[0].UID)
}

func TestResyncMakesNoWrites(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.clearActions()
	for range 3 {
		e.reconcile(t)
	}
	require.Zero(t, e.writes(), "a pass with nothing to do writes nothing")
}

func TestTemplateChangeUpdatesEachClusterOnce(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.clearActions()
	e.edit(t, setImage("nginx:1.22"))
	e.reconcile(t)
	for _, c := range clusterNames {
		require.Equal(t, "nginx:1.22", image(t, e.member(t, c)))
		require.Equal(t, map[fake.Verb]int{fake.VerbUpdate: 1}, e.memberWrites(t, c), c)
		require.Equal(t, "2", e.member(t, c).GetAnnotations()[federation.RevisionAnnotation])
	}
	fed := e.fed(t)
	require.EqualValues(t, 2, fed.Status.SyncedRevision)
	require.Len(t, e.host.Objects(revisionsGVR), 2)
}

func setMemberImage(u *unstructured.Unstructured, img string) {
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = img
	_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
}
