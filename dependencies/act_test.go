package dependencies_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestReconcileHoldsAnOrphanedWorkloadUntilItsReleasesAreWritten: the driver lets an
// orphaned workload go only once every write of the pass succeeded. While the write that
// records where its dependency is released fails, the workload keeps the finalizer and the
// pass fails; the next pass that writes it lets the workload go.
func TestReconcileHoldsAnOrphanedWorkloadUntilItsReleasesAreWritten(t *testing.T) {
	ctx := context.Background()
	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"ns"}})
	deploys, fedCM := federation.DeploymentType.FederatedGVR(), federation.ConfigMapType.FederatedGVR()
	fedtest.Create(t, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: ns}, data: {level: info}}`)
	workloadWith(t, e.Host, "web", `          containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}]}]`, "eu")
	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock})
	require.NoError(t, err)
	_, err = d.Reconcile(ctx, federation.Key{Namespace: "ns"})
	require.NoError(t, err)

	u, err := e.Host.Get(ctx, deploys, "ns", "web")
	require.NoError(t, err)
	u.SetAnnotations(map[string]string{federation.OrphanAnnotation: "true"})
	_, err = e.Host.Update(ctx, deploys, u)
	require.NoError(t, err)
	require.NoError(t, e.Host.Delete(ctx, deploys, "ns", "web", metav1.DeleteOptions{}))

	failed := errors.New("injected: the host refuses the update")
	e.Host.SetHooks(fake.Hooks{Update: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if gvr == fedCM {
			return nil, failed
		}
		return next.Update(ctx, gvr, obj)
	}})
	_, err = d.Reconcile(ctx, federation.Key{Namespace: "ns"})
	require.ErrorIs(t, err, failed)
	u, err = e.Host.Get(ctx, deploys, "ns", "web")
	require.NoError(t, err, "the orphaned workload is let go before its release is written")
	require.Contains(t, u.GetFinalizers(), federation.DependenciesFinalizer)

	e.Host.SetHooks(fake.Hooks{})
	_, err = d.Reconcile(ctx, federation.Key{Namespace: "ns"})
	require.NoError(t, err)
	_, err = e.Host.Get(ctx, deploys, "ns", "web")
	require.True(t, apierrors.IsNotFound(err), "web: %v", err)
	cm, err := e.Host.Get(ctx, fedCM, "ns", "cfg")
	require.NoError(t, err)
	require.Equal(t, []string{"eu"}, federation.ReleaseClusters(cm.GetAnnotations()))
}

// TestReconcileDeletesOnlyTheVersionItDecidedOn: a generated dependency is deleted only as
// the pass read it. A cache that lags the host (here a List that still serves the version
// before the dependency recorded where its copies are released) would otherwise delete what
// orphaned pods still use: the delete is locked on the uid and resourceVersion read, so the
// host refuses it, the pass fails, and the next pass, reading the release, keeps the
// dependency placed nowhere.
func TestReconcileDeletesOnlyTheVersionItDecidedOn(t *testing.T) {
	ctx := context.Background()
	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"ns"}})
	fedCM := federation.ConfigMapType.FederatedGVR()
	fedtest.Create(t, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: ns}, data: {level: info}}`)
	fedtest.Create(t, e.Host, fedCM, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: cfg, namespace: ns,
  labels: {`+federation.GeneratedByLabel+`: `+federation.GeneratedByDependencies+`}}, spec: {template: {data: {level: info}}, placement: {clusters: [{name: eu}]}}}`)
	stale, err := e.Host.List(ctx, fedCM, "ns", metav1.ListOptions{})
	require.NoError(t, err)
	// An orphaned workload's pods in eu use cfg: its release is recorded.
	u, err := e.Host.Get(ctx, fedCM, "ns", "cfg")
	require.NoError(t, err)
	u.SetAnnotations(map[string]string{federation.ReleaseClustersAnnotation: "eu"})
	_, err = e.Host.Update(ctx, fedCM, u)
	require.NoError(t, err)

	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock})
	require.NoError(t, err)
	e.Host.SetHooks(fake.Hooks{List: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		if gvr == fedCM {
			return stale.DeepCopy(), nil
		}
		return next.List(ctx, gvr, namespace, opts)
	}})
	_, err = d.Reconcile(ctx, federation.Key{Namespace: "ns"})
	require.True(t, apierrors.IsConflict(err), "a pass on a stale list: %v; want a Conflict", err)
	_, err = e.Host.Get(ctx, fedCM, "ns", "cfg")
	require.NoError(t, err, "the dependency was deleted on a stale read")

	e.Host.SetHooks(fake.Hooks{})
	_, err = d.Reconcile(ctx, federation.Key{Namespace: "ns"})
	require.NoError(t, err)
	u, err = e.Host.Get(ctx, fedCM, "ns", "cfg")
	require.NoError(t, err)
	require.Equal(t, []string{"eu"}, federation.ReleaseClusters(u.GetAnnotations()))
	clusters, _, _ := unstructured.NestedSlice(u.Object, "spec", "placement", "clusters")
	require.Empty(t, clusters, "placed nowhere")
}
