package fake_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/fake"
)

// TestInitialNamespaces: a new cluster has the namespaces of a new real cluster.
func TestInitialNamespaces(t *testing.T) {
	c := fake.NewCluster("c")
	list, err := c.List(testCtx(t), namespaceGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.GetName())
		require.Equal(t, "Active", nested(t, &ns, "status", "phase"))
		require.Equal(t, ns.GetName(), ns.GetLabels()["kubernetes.io/metadata.name"])
	}
	require.Equal(t, []string{"default", "kube-node-lease", "kube-public", "kube-system"}, names)
	require.Len(t, c.Actions(), 1, "only the List: the cluster's own writes are not actions")
	require.Equal(t, int64(4), c.ResourceVersion())

	var zero fake.Cluster
	_, err = zero.Get(testCtx(t), namespaceGVR, "", "kube-system")
	require.NoError(t, err, "a zero Cluster has them too")
}

// TestCreateNeedsItsNamespace is NamespaceLifecycle: a namespaced object needs its namespace,
// or Create is NotFound for the namespace; cluster-scoped objects and Seed are not checked.
func TestCreateNeedsItsNamespace(t *testing.T) {
	c := fake.NewCluster("c")
	ctx := testCtx(t)
	_, err := c.Create(ctx, configMapGVR, configMap("team", "cfg", nil))
	require.True(t, apierrors.IsNotFound(err), "Create in a missing namespace = %v", err)
	require.Equal(t, `namespaces "team" not found`, err.Error())
	details := err.(apierrors.APIStatus).Status().Details
	require.Equal(t, "namespaces", details.Kind)
	require.Equal(t, "team", details.Name)

	ns := mustCreate(t, c, namespaceGVR, namespace("team"))
	require.Equal(t, "Active", nested(t, ns, "status", "phase"))
	require.Equal(t, []any{"kubernetes"}, nested(t, ns, "spec", "finalizers"))
	require.Equal(t, "team", ns.GetLabels()["kubernetes.io/metadata.name"])
	mustCreate(t, c, configMapGVR, configMap("team", "cfg", nil))

	mustCreate(t, c, priorityClassGVR, priorityClass("high", 1000)) // cluster-scoped
	require.NoError(t, c.Seed(configMap("elsewhere", "fixture", nil)), "Seed skips admission")
}

// TestNamespaceDeletion: deleting a namespace makes it Terminating and deletes its contents,
// finalizers honoured; creates in it are Forbidden, updates are not; it goes when it is empty.
func TestNamespaceDeletion(t *testing.T) {
	c := newCluster(t, "c")
	ctx := testCtx(t)
	mustCreate(t, c, configMapGVR, configMap("prod", "free", nil))
	held := configMap("prod", "held", nil)
	held.SetFinalizers([]string{"example.com/hold"})
	mustCreate(t, c, configMapGVR, held)
	mustCreate(t, c, widgetGVR, widget("prod", "w", 1))
	mustCreate(t, c, configMapGVR, configMap("dev", "other", nil))

	require.NoError(t, c.Delete(ctx, namespaceGVR, "", "prod", metav1.DeleteOptions{}))
	ns, err := c.Get(ctx, namespaceGVR, "", "prod")
	require.NoError(t, err, "an object with finalizers holds the namespace")
	require.NotNil(t, ns.GetDeletionTimestamp())
	require.Equal(t, "Terminating", nested(t, ns, "status", "phase"))
	_, err = c.Peek(configMapGVR, "prod", "free")
	require.True(t, apierrors.IsNotFound(err), "objects are deleted with their namespace: %v", err)
	_, err = c.Peek(widgetGVR, "prod", "w")
	require.True(t, apierrors.IsNotFound(err), "custom resources too: %v", err)
	_, err = c.Peek(configMapGVR, "dev", "other")
	require.NoError(t, err, "other namespaces keep theirs")

	_, err = c.Create(ctx, configMapGVR, configMap("prod", "new", nil))
	require.True(t, apierrors.IsForbidden(err), "Create in a terminating namespace = %v", err)
	require.Equal(t, `configmaps "new" is forbidden: unable to create new content in namespace prod because it is being terminated`, err.Error())
	causes := err.(apierrors.APIStatus).Status().Details.Causes
	require.Equal(t, metav1.CauseType("NamespaceTerminating"), causes[0].Type)

	got, err := c.Get(ctx, configMapGVR, "prod", "held")
	require.NoError(t, err)
	got.SetLabels(map[string]string{"cleanup": "done"})
	got, err = c.Update(ctx, configMapGVR, got)
	require.NoError(t, err, "updates are not refused")
	got.SetFinalizers(nil)
	_, err = c.Update(ctx, configMapGVR, got)
	require.NoError(t, err)
	_, err = c.Get(ctx, namespaceGVR, "", "prod")
	require.True(t, apierrors.IsNotFound(err), "the emptied namespace is gone: %v", err)
	_, err = c.Create(ctx, configMapGVR, configMap("prod", "new", nil))
	require.True(t, apierrors.IsNotFound(err), "Create in the deleted namespace = %v", err)
}

// TestNamespaceFinalizers: a namespace with finalizers of its own stays, emptied, until they
// are removed.
func TestNamespaceFinalizers(t *testing.T) {
	c := fake.NewCluster("c")
	ctx := testCtx(t)
	ns := namespace("team")
	ns.SetFinalizers([]string{"example.com/hold"})
	mustCreate(t, c, namespaceGVR, ns)
	require.NoError(t, c.Delete(ctx, namespaceGVR, "", "team", metav1.DeleteOptions{}))
	got, err := c.Get(ctx, namespaceGVR, "", "team")
	require.NoError(t, err)
	require.Nil(t, nestedOrNil(got, "spec", "finalizers"), "the namespace controller is done")
	got.SetFinalizers(nil)
	_, err = c.Update(ctx, namespaceGVR, got)
	require.NoError(t, err)
	_, err = c.Get(ctx, namespaceGVR, "", "team")
	require.True(t, apierrors.IsNotFound(err), "%v", err)
}

// TestImmortalNamespaces: default, kube-system and kube-public cannot be deleted.
func TestImmortalNamespaces(t *testing.T) {
	c := fake.NewCluster("c")
	ctx := testCtx(t)
	for _, name := range []string{"default", "kube-system", "kube-public"} {
		err := c.Delete(ctx, namespaceGVR, "", name, metav1.DeleteOptions{})
		require.True(t, apierrors.IsForbidden(err), "Delete %s = %v", name, err)
		require.Equal(t, `namespaces "`+name+`" is forbidden: this namespace may not be deleted`, err.Error())
	}
	require.NoError(t, c.Delete(ctx, namespaceGVR, "", "kube-node-lease", metav1.DeleteOptions{}))
}
