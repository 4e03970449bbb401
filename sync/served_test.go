package sync_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
	"github.com/fedkit/fedkit/sync/plan"
)

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// TestTypeNotServedInOneCluster: a member without the target type's CRD reports
// TypeNotServed; the others proceed.
func TestTypeNotServedInOneCluster(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	widgets := federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "")
	crd, err := federation.CRDFor(widgets)
	require.NoError(t, err)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	e.mustCreate(t, e.host, crds, &unstructured.Unstructured{Object: m})
	for _, c := range []string{"aws", "gcp"} { // azure does not serve widgets
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(widgetCRD), &u.Object))
		e.mustCreate(t, e.cluster(t, c), crds, u)
	}
	e.typ = widgets
	s, err := fedsync.New(e.host, e.fleet, widgets, fedsync.Options{Clock: e.clock})
	require.NoError(t, err)
	e.s = s
	e.apply(t, widgets.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedWidget
metadata: {name: app-frontend, namespace: production}
spec:
  template: {spec: {size: 3}}
  placement: {clusters: [{name: aws}, {name: gcp}, {name: azure}]}
`)
	_, err = e.s.Reconcile(ctx, key)
	require.NoError(t, err, "a member that does not serve the type is not retried with backoff")
	got := propagation(e.fed(t))
	require.Equal(t, plan.ReasonTypeNotServed+"@0", got["azure"])
	require.Equal(t, "@1", got["aws"])
	require.Equal(t, "@1", got["gcp"])
	w, err := e.cluster(t, "gcp").Peek(widgets.TargetGVR(), key.Namespace, key.Name)
	require.NoError(t, err)
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	require.EqualValues(t, 3, size)
}

// TestNamespaceGovernedByAFederatedNamespace: when a FederatedNamespace governs the member
// namespace, sync does not create it itself; it waits for that FederatedNamespace's sync.
func TestNamespaceGovernedByAFederatedNamespace(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, federation.NamespaceType.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedNamespace
metadata: {name: production, namespace: production}
spec:
  template: {metadata: {labels: {team: shop}}}
  placement: {clusters: [{name: aws}]}
`)
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	got := propagation(e.fed(t))
	require.Equal(t, plan.ReasonWaitingForNamespace+"@0", got["aws"])
	for _, c := range []string{"gcp", "azure"} { // the FederatedNamespace does not place them
		require.Equal(t, plan.ReasonNamespaceNotPlaced+"@0", got[c], c)
	}
	_, err := e.cluster(t, "aws").Peek(namespaces, "", key.Namespace)
	require.Error(t, err, "sync left the namespace to its FederatedNamespace")

	// The FederatedNamespace's own Syncer creates it in aws, with its template's labels.
	ns, err := fedsync.New(e.host, e.fleet, federation.NamespaceType, fedsync.Options{Clock: e.clock})
	require.NoError(t, err)
	_, err = ns.Reconcile(ctx, federation.Key{Namespace: key.Namespace, Name: key.Namespace})
	require.NoError(t, err)
	created, err := e.cluster(t, "aws").Peek(namespaces, "", key.Namespace)
	require.NoError(t, err)
	require.Equal(t, "shop", created.GetLabels()["team"])
	e.reconcile(t)
	require.Equal(t, "@1", propagation(e.fed(t))["aws"])
	require.NotNil(t, e.member(t, "aws"))
}
