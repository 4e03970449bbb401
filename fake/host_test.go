package fake_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// TestNewHost: a host serves fedkit's resources with their CRDs' scope and subresources,
// from the start and without recorded actions.
func TestNewHost(t *testing.T) {
	host := fake.NewHost("host")
	ctx := testCtx(t)
	require.Empty(t, host.Actions())
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	for _, crd := range crds {
		got, err := host.Peek(crdGVR, "", crd.Name)
		require.NoError(t, err, crd.Name)
		require.Equal(t, "True", conditionStatus(got, "Established"), crd.Name)
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
		m, err := host.RESTMapping(gvr.GroupVersion().WithKind(crd.Spec.Names.Kind))
		require.NoError(t, err, crd.Name)
		require.Equal(t, gvr, m.Resource)
		require.Equal(t, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, m.Scope.Name() == "namespace", crd.Name)
		_, err = host.List(ctx, gvr, "", metav1.ListOptions{})
		require.NoError(t, err, crd.Name)
	}
	// Cluster, ReplicaSchedulingPreference, PropagationPolicy, ClusterPropagationPolicy,
	// FederatedTypeConfig, Assignment, then one per type.
	require.Len(t, crds, 6+len(federation.BuiltinTypes()))
}

// TestHostTemplate: hosts made from one template serve the same API as NewHost's, and each
// has its own copy: deleting a CRD in one leaves the other, and the template, serving it.
func TestHostTemplate(t *testing.T) {
	tmpl, err := fake.NewHostTemplate()
	require.NoError(t, err)
	a, b := tmpl.NewHost("a"), tmpl.NewHost("b")
	require.Empty(t, a.Actions())
	for _, u := range fake.NewHost("ref").Objects(crdGVR) {
		got, err := a.Peek(crdGVR, "", u.GetName())
		require.NoError(t, err, u.GetName())
		if diff := cmp.Diff(u.Object["spec"], got.Object["spec"]); diff != "" {
			t.Errorf("%s: spec differs from NewHost's (-NewHost +template):\n%s", u.GetName(), diff)
		}
	}
	ctx := testCtx(t)
	name := "federateddeployments.types.federation.k8s.io"
	require.NoError(t, a.Delete(ctx, crdGVR, "", name, metav1.DeleteOptions{}))
	_, err = a.List(ctx, federation.DeploymentType.FederatedGVR(), "", metav1.ListOptions{})
	require.Error(t, err, "a no longer serves FederatedDeployments")
	for _, h := range []*fake.Cluster{b, tmpl.NewHost("c")} {
		_, err = h.List(ctx, federation.DeploymentType.FederatedGVR(), "", metav1.ListOptions{})
		require.NoError(t, err, "%s still serves FederatedDeployments", h.Name())
	}
}

func conditionStatus(u interface{ UnstructuredContent() map[string]any }, typ string) string {
	conds, _ := u.UnstructuredContent()["status"].(map[string]any)["conditions"].([]any)
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == typ {
			return fmt.Sprint(m["status"])
		}
	}
	return ""
}

// A host serves fedkit's API: Clusters, ReplicaSchedulingPreferences and the built-in
// federated types. A type of your own is federated by creating its CRD in the host, as on a
// real one.
func ExampleNewHost() {
	ctx := context.Background()
	host := fake.NewHost("host")
	_, err := host.List(ctx, federation.DeploymentType.FederatedGVR(), "", metav1.ListOptions{})
	fmt.Println("FederatedDeployment served:", err == nil)

	cronTab := federation.NewTypeConfig(schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}, "crontabs", true, "")
	_, err = host.List(ctx, cronTab.FederatedGVR(), "", metav1.ListOptions{})
	fmt.Println("FederatedCronTab served before its CRD:", err == nil)

	crd, err := federation.CRDFor(cronTab)
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := federation.ToUnstructured(crd)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := host.Create(ctx, apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"), u); err != nil {
		fmt.Println(err)
		return
	}
	_, err = host.List(ctx, cronTab.FederatedGVR(), "", metav1.ListOptions{})
	fmt.Println("FederatedCronTab served:", err == nil)
	// Output:
	// FederatedDeployment served: true
	// FederatedCronTab served before its CRD: false
	// FederatedCronTab served: true
}

func TestRecorder(t *testing.T) {
	var r fake.Recorder
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("types.federation.k8s.io/v1alpha1")
	obj.SetKind("FederatedDeployment")
	obj.SetNamespace("prod")
	obj.SetName("web")
	r.Eventf(obj, federation.EventTypeWarning, "Unschedulable", "%d replicas fit nowhere", 3)
	r.Eventf(nil, federation.EventTypeNormal, "Nothing", "no object")
	want := []fake.Event{
		{Kind: "FederatedDeployment", Namespace: "prod", Name: "web", Type: "Warning", Reason: "Unschedulable", Message: "3 replicas fit nowhere"},
		{Type: "Normal", Reason: "Nothing", Message: "no object"},
	}
	if diff := cmp.Diff(want, r.Events()); diff != "" {
		t.Errorf("Events() (-want +got):\n%s", diff)
	}
	if got, want := r.Events()[0].String(), "Warning FederatedDeployment prod/web Unschedulable: 3 replicas fit nowhere"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	r.Reset()
	if got := r.Events(); len(got) != 0 {
		t.Errorf("Events() after Reset = %v; want none", got)
	}
}
