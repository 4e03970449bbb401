package dependencies_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestReconcileOrphanedWorkloadReleasesDependencies: the loop holds each workload whose
// dependencies follow it with its finalizer, so it sees the deletion however fast the rest
// goes. A workload deleted with federation.OrphanAnnotation (a policy that no longer selects
// its native object) releases its dependencies where it ran: the generated FederatedConfigMap
// lists those clusters in federation.ReleaseClustersAnnotation before the finalizer goes, and
// once the workload is gone it stays, placed nowhere, so sync releases its copies rather than
// delete them. A workload deleted without the annotation goes at once and releases nothing;
// one that stops propagating its dependencies loses the finalizer.
func TestReconcileOrphanedWorkloadReleasesDependencies(t *testing.T) {
	ctx := context.Background()
	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"ns"}})
	deploys, fedCM := federation.DeploymentType.FederatedGVR(), federation.ConfigMapType.FederatedGVR()
	for _, name := range []string{"kept", "gone"} {
		fedtest.Create(t, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: `+name+`, namespace: ns}, data: {level: info}}`)
	}
	workloadWith(t, e.Host, "web", `          containers: [{name: c, envFrom: [{configMapRef: {name: kept}}]}]`, "eu", "us")
	workloadWith(t, e.Host, "api", `          containers: [{name: c, envFrom: [{configMapRef: {name: gone}}]}]`, "eu")
	workloadWith(t, e.Host, "job", `          containers: [{name: c}]`, "eu")
	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock})
	require.NoError(t, err)
	pass := func() {
		t.Helper()
		_, err := d.Reconcile(ctx, federation.Key{Namespace: "ns"})
		require.NoError(t, err)
	}
	finalizers := func(name string) []string {
		t.Helper()
		u, err := e.Host.Get(ctx, deploys, "ns", name)
		if apierrors.IsNotFound(err) {
			return []string{"(gone)"}
		}
		require.NoError(t, err)
		return u.GetFinalizers()
	}
	// dependency says where the generated FederatedConfigMap name is placed and what it
	// releases: "eu,us release eu,us"; "(none)" when there is none.
	dependency := func(name string) string {
		t.Helper()
		u, err := e.Host.Get(ctx, fedCM, "ns", name)
		if apierrors.IsNotFound(err) {
			return "(none)"
		}
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		var placed []string
		for _, c := range obj.Spec.Placement.Clusters {
			placed = append(placed, c.Name)
		}
		return federation.FormatRequiredClusters(placed) + " release " + federation.FormatReleaseClusters(federation.ReleaseClusters(u.GetAnnotations()))
	}
	snapshot := func() map[string]string {
		return map[string]string{"kept": dependency("kept"), "gone": dependency("gone"),
			"web": fmtList(finalizers("web")), "api": fmtList(finalizers("api")), "job": fmtList(finalizers("job"))}
	}
	check := func(step string, want map[string]string) {
		t.Helper()
		if diff := cmp.Diff(want, snapshot()); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", step, diff)
		}
	}

	pass()
	check("held", map[string]string{"kept": "eu,us release ", "gone": "eu release ",
		"web": federation.DependenciesFinalizer, "api": federation.DependenciesFinalizer, "job": federation.DependenciesFinalizer})

	// web is orphaned as package propagation does it: marked, then deleted; api is deleted;
	// job stops propagating its dependencies.
	u, err := e.Host.Get(ctx, deploys, "ns", "web")
	require.NoError(t, err)
	u.SetAnnotations(map[string]string{federation.OrphanAnnotation: "true"})
	_, err = e.Host.Update(ctx, deploys, u)
	require.NoError(t, err)
	require.NoError(t, e.Host.Delete(ctx, deploys, "ns", "web", metav1.DeleteOptions{}))
	require.NoError(t, e.Host.Delete(ctx, deploys, "ns", "api", metav1.DeleteOptions{}))
	u, err = e.Host.Get(ctx, deploys, "ns", "job")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, false, "spec", "propagateDependencies"))
	_, err = e.Host.Update(ctx, deploys, u)
	require.NoError(t, err)
	check("deleting, held until seen", map[string]string{"kept": "eu,us release ", "gone": "eu release ",
		"web": federation.DependenciesFinalizer, "api": federation.DependenciesFinalizer, "job": federation.DependenciesFinalizer})

	pass()
	check("seen: web's release recorded, the finalizers gone", map[string]string{"kept": "eu,us release eu,us", "gone": "eu release ",
		"web": "(gone)", "api": "(gone)", "job": ""})

	pass()
	check("what web's orphaned copies use stays, placed nowhere; api's goes", map[string]string{"kept": " release eu,us", "gone": "(none)",
		"web": "(gone)", "api": "(gone)", "job": ""})
}

func fmtList(s []string) string {
	return federation.FormatRequiredClusters(slices.Clone(s))
}
