package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

// seedUnmanaged puts a Deployment of the same name, created by someone else, in cluster.
func seedUnmanaged(t *testing.T, e *env, cluster string, labels map[string]any) {
	t.Helper()
	meta := map[string]any{"name": key.Name, "namespace": key.Namespace}
	if labels != nil {
		meta["labels"] = labels
	}
	e.mustCreate(t, e.cluster(t, cluster), namespaces, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": key.Namespace}}})
	require.NoError(t, e.cluster(t, cluster).Seed(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "mine", "image": "mine:1"}}}}},
	}}))
}

func TestUnmanagedObjectIsLeftAlone(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	seedUnmanaged(t, e, "aws", nil)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	_, err := e.s.Reconcile(ctx, key)
	require.NoError(t, err, "a conflict is not retried with backoff: it waits for a change")
	require.Equal(t, "mine:1", image(t, e.member(t, "aws")))
	require.Equal(t, plan.ReasonAlreadyExists+"@0", propagation(e.fed(t))["aws"])
	require.Equal(t, "False", string(propagated(e.fed(t)).Status))
	require.Equal(t, frontendImage, image(t, e.member(t, "gcp")), "the other clusters proceed")

	// Later passes do not try to create it again, and never write to it.
	e.clearActions()
	e.reconcile(t)
	require.Empty(t, e.memberWrites(t, "aws"))

	// Placement moves away from aws: the object is not ours, so it is not deleted.
	e.edit(t, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "gcp"}}, "spec", "placement", "clusters")
	})
	e.reconcile(t)
	require.NotNil(t, e.member(t, "aws"))
	require.Equal(t, "mine:1", image(t, e.member(t, "aws")))
	require.NotContains(t, propagation(e.fed(t)), "aws")
}

func TestAdoptPolicy(t *testing.T) {
	e := newEnv(t, fedsync.Options{Conflict: fedsync.ConflictAdopt})
	seedUnmanaged(t, e, "aws", nil)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	require.Equal(t, frontendImage, image(t, e.member(t, "aws")))
}

func TestTwoFederationsNeverTouchEachOthersObjects(t *testing.T) {
	e := newEnv(t, fedsync.Options{Identity: "fed-a"})
	other := fake.NewHost("other-host")
	e.mustCreate(t, other, namespaces, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "production"}}})
	require.NoError(t, e.fleet.Register(ctx, other))
	b, err := fedsync.New(other, e.fleet, e.typ, fedsync.Options{Identity: "fed-b", Clock: e.clock, Conflict: fedsync.ConflictAdopt})
	require.NoError(t, err)

	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	// The second federation has an object of the same name, placed in aws, image 2.
	u := &unstructured.Unstructured{}
	require.NoError(t, yamlInto(frontend, u))
	setImage("nginx:2")(u)
	_, err = other.Create(ctx, e.typ.FederatedGVR(), u)
	require.NoError(t, err)
	_, err = b.Reconcile(ctx, key)
	require.NoError(t, err)

	m := e.member(t, "aws")
	require.Equal(t, "fed-a", m.GetLabels()[federation.ManagedByLabel])
	require.Equal(t, frontendImage, image(t, m), "even with Adopt, another federation's object is not taken")
	fedB, err := other.Get(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(fedB)
	require.NoError(t, err)
	require.Equal(t, plan.ReasonManagedByOther+"@0", propagation(obj)["aws"])

	// Deleting b's object deletes nothing of a's.
	require.NoError(t, other.Delete(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name, deleteOpts()))
	_, err = b.Reconcile(ctx, key)
	require.NoError(t, err)
	_, err = other.Get(ctx, e.typ.FederatedGVR(), key.Namespace, key.Name)
	require.True(t, apierrors.IsNotFound(err), "finalizer released: %v", err)
	for _, c := range clusterNames {
		require.NotNil(t, e.member(t, c), c)
	}
}
