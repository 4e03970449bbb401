package sync_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

func (e *env) deleteFederated(t *testing.T) {
	t.Helper()
	require.NoError(t, e.host.Delete(fedtest.AsUser(ctx), e.typ.FederatedGVR(), key.Namespace, key.Name, deleteOpts()))
}

func (e *env) gone(t *testing.T) bool {
	t.Helper()
	_, err := e.host.Peek(e.typ.FederatedGVR(), key.Namespace, key.Name)
	return apierrors.IsNotFound(err)
}

func TestPlacementChangeDeletesWhereNoLongerPlaced(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "aws"}, map[string]any{"name": "gcp"}}, "spec", "placement", "clusters")
	})
	e.reconcile(t)
	require.Nil(t, e.member(t, "azure"))
	require.NotNil(t, e.member(t, "aws"))
	require.NotContains(t, propagation(e.fed(t)), "azure")
	require.EqualValues(t, 2, e.fed(t).Status.SyncedRevision, "a placement change is a new revision")
	// The namespace sync created in azure held nothing else: it is gone too.
	_, err := e.cluster(t, "azure").Peek(namespaces, "", key.Namespace)
	require.True(t, apierrors.IsNotFound(err), "namespace: %v", err)
}

func TestDeletionRemovesMembersThenFinalizer(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.deleteFederated(t)
	require.False(t, e.gone(t), "the finalizer holds it")
	e.reconcile(t)
	for _, c := range clusterNames {
		require.Nil(t, e.member(t, c), c)
	}
	require.True(t, e.gone(t))
}

func TestDeletionWithOrphaningKeepsMembersUnlabelled(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a[federation.OrphanAnnotation] = "true"
		u.SetAnnotations(a)
	})
	e.deleteFederated(t)
	e.reconcile(t)
	require.True(t, e.gone(t))
	for _, c := range clusterNames {
		m := e.member(t, c)
		require.NotNil(t, m, c)
		require.NotContains(t, m.GetLabels(), federation.ManagedByLabel)
		require.NotContains(t, m.GetLabels(), federation.FederatedNameLabel)
		require.NotContains(t, m.GetAnnotations(), federation.DesiredHashAnnotation)
		require.Equal(t, frontendImage, image(t, m), "the object itself is kept as it was")
	}
}

func TestDeletionWithADeadClusterReleasesAfterTimeout(t *testing.T) {
	e := newEnv(t, fedsync.Options{DeletionTimeout: 10 * time.Minute})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.NoError(t, e.fleet.Partition("azure"))
	require.NoError(t, e.fleet.Register(ctx, e.host))
	e.deleteFederated(t)
	res := e.reconcile(t)
	require.False(t, e.gone(t), "azure may still hold the object")
	require.Positive(t, res.RequeueAfter)
	require.Nil(t, e.member(t, "aws"))
	require.Equal(t, plan.ReasonClusterNotReady+"@0", propagation(e.fed(t))["azure"])

	e.clock.Step(9 * time.Minute)
	e.reconcile(t)
	require.False(t, e.gone(t))
	e.clock.Step(time.Minute)
	e.reconcile(t)
	require.True(t, e.gone(t), "released after the timeout")
	require.Contains(t, e.events.list()[len(e.events.list())-1], "MembersLeftBehind")
	require.Contains(t, e.events.list()[len(e.events.list())-1], "azure")
}

func TestRollbackRestoresAnEarlierRevision(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.23"))
	e.reconcile(t)
	require.EqualValues(t, 3, e.fed(t).Status.SyncedRevision)

	require.NoError(t, fedsync.Rollback(ctx, e.host, e.typ, key, 1))
	e.reconcile(t)
	for _, c := range clusterNames {
		require.Equal(t, frontendImage, image(t, e.member(t, c)), c)
		require.Equal(t, "4", e.member(t, c).GetAnnotations()[federation.RevisionAnnotation], "a rollback is a new revision")
	}
	require.EqualValues(t, 4, e.fed(t).Status.SyncedRevision)
	require.Len(t, e.host.Objects(revisionsGVR), 3, "revision 1's snapshot was renumbered, not copied")

	// 0 means the previous revision: 3 (nginx:1.23).
	require.NoError(t, fedsync.Rollback(ctx, e.host, e.typ, key, 0))
	e.reconcile(t)
	require.Equal(t, "nginx:1.23", image(t, e.member(t, "aws")))

	err := fedsync.Rollback(ctx, e.host, e.typ, key, 42)
	require.ErrorIs(t, err, fedsync.ErrRevisionNotFound)
	require.Contains(t, err.Error(), "the history has 2, 4, 5")
}

func TestHistoryIsPrunedToTheLimit(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "revisionHistoryLimit")
	})
	for i := range 5 {
		e.edit(t, setImage("nginx:1."+string(rune('0'+i))))
		e.reconcile(t)
	}
	revs := e.host.Objects(revisionsGVR)
	require.Len(t, revs, 2)
}

// TestRollbackFindsAClusterScopedHistory: a cluster-scoped federated object keeps its history
// in the Syncer's HistoryNamespace, and Rollback looks there when told to.
func TestRollbackFindsAClusterScopedHistory(t *testing.T) {
	f := fedtest.New(t, fedtest.Options{Now: now, Namespaces: []string{"fed-history"}, Members: []fedtest.Member{{Name: "aws"}}})
	typ := federation.NewTypeConfig(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "clusterroles", false, "")
	crd, err := federation.CRDFor(typ)
	require.NoError(t, err)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	_, err = f.Host.Create(ctx, apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"), &unstructured.Unstructured{Object: obj})
	require.NoError(t, err)
	s, err := fedsync.New(f.Host, f.Fleet, typ, fedsync.Options{Clock: f.Clock, Registerer: f.Registry, HistoryNamespace: "fed-history"})
	require.NoError(t, err)
	role := func(verb string) string {
		return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedClusterRole
metadata: {name: reader}
spec:
  placement: {clusters: [{name: aws}]}
  template:
    rules: [{apiGroups: [""], resources: [pods], verbs: [` + verb + `]}]
`
	}
	k := federation.Key{Name: "reader"}
	verbOf := func() string {
		m, ok := f.Fleet.Member("aws")
		require.True(t, ok)
		u, err := m.Peek(typ.TargetGVR(), "", "reader")
		require.NoError(t, err)
		rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
		return fmt.Sprint(rules[0].(map[string]any)["verbs"])
	}
	fedtest.Apply(t, f.Host, typ.FederatedGVR(), role("get"))
	_, err = s.Reconcile(ctx, k)
	require.NoError(t, err)
	fedtest.Apply(t, f.Host, typ.FederatedGVR(), role("list"))
	_, err = s.Reconcile(ctx, k)
	require.NoError(t, err)
	require.Equal(t, "[list]", verbOf())

	err = fedsync.Rollback(ctx, f.Host, typ, k, 1)
	require.ErrorIs(t, err, fedsync.ErrRevisionNotFound, "the default history namespace has none of it")
	require.Contains(t, err.Error(), "the history is empty")

	require.NoError(t, fedsync.Rollback(ctx, f.Host, typ, k, 1, fedsync.HistoryNamespace("fed-history")))
	_, err = s.Reconcile(ctx, k)
	require.NoError(t, err)
	require.Equal(t, "[get]", verbOf())
}
