package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// deployment is a Deployment of the federated object's name.
func deployment() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	must(yaml.Unmarshal([]byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-frontend, namespace: production}
spec:
  replicas: 1
  selector: {matchLabels: {app: mine}}
  template:
    metadata: {labels: {app: mine}}
    spec: {containers: [{name: c, image: "mine:1"}]}
`), &u.Object))
	return u
}

// OwnedDiff names a changed field of a container by the container's place in the render and
// shows the live value of the container of the same name, wherever a webhook put its sidecar
// (it reported the whole containers list, of another length).
func TestOwnedDiffMatchesContainersByName(t *testing.T) {
	desired := &unstructured.Unstructured{}
	must(yaml.Unmarshal([]byte(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: a},
spec: {template: {spec: {containers: [{name: app, image: "app:1", resources: {requests: {cpu: 1}}}]}}}}`), &desired.Object))
	live := &unstructured.Unstructured{}
	must(yaml.Unmarshal([]byte(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: a},
spec: {template: {spec: {containers: [{name: istio-proxy, image: "proxy:1"}, {name: app, image: "evil:1", resources: {requests: {cpu: "1"}}}]}}}}`), &live.Object))
	want := []plan.FieldChange{{Path: "/spec/template/spec/containers/0/image", Live: "evil:1", InLive: true, Desired: "app:1"}}
	if diff := cmp.Diff(want, plan.OwnedDiff(desired, live)); diff != "" {
		t.Errorf("OwnedDiff (-want +got):\n%s", diff)
	}
}

// TestOwnedDiff: the owned fields an update changes, with their values, sorted; member-owned
// fields are not differences.
func TestOwnedDiff(t *testing.T) {
	desired := deployment()
	desired.SetLabels(map[string]string{federation.ManagedByLabel: "fedkit"})
	desired.SetAnnotations(map[string]string{federation.RevisionAnnotation: "3", "team": "web"})
	live := desired.DeepCopy()
	live.SetAnnotations(map[string]string{federation.RevisionAnnotation: "2", "team": "web", "deployment.kubernetes.io/revision": "4"})
	_ = unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas")
	_ = unstructured.SetNestedField(live.Object, "Recreate", "spec", "strategy", "type")
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"name": "c", "image": "mine:2"}}, "spec", "template", "spec", "containers")
	live.SetLabels(nil)
	live.SetCreationTimestamp(metav1.Now())

	var got []string
	for _, c := range plan.OwnedDiff(desired, live) {
		got = append(got, c.String())
	}
	want := []string{
		`/metadata/labels/` + strings.ReplaceAll(federation.ManagedByLabel, "/", "~1") + `: (absent) -> "fedkit"`,
		`/spec/replicas: 5 -> 1`,
		`/spec/template/spec/containers/0/image: "mine:2" -> "mine:1"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OwnedDiff (-want +got):\n%s", diff)
	}
	require.Empty(t, plan.OwnedDiff(desired, desired.DeepCopy()))
	require.True(t, slices.ContainsFunc(plan.OwnedDiff(desired, nil), func(c plan.FieldChange) bool {
		return c.Path == "/spec" && !c.InLive
	}), "a create: every top-level field is new")
}

// TestDecideReportsUnknownFieldsOfEveryBuiltinKind: Decide names, for every create and update of a
// built-in kind, the fields the member's type does not have (Change.Unknown), from the type's
// own schema: what the member's API server drops. A custom resource's schema is its CRD's.
func TestDecideReportsUnknownFieldsOfEveryBuiltinKind(t *testing.T) {
	for _, tc := range []struct {
		typ      federation.TypeConfig
		template string
		want     []string
	}{
		{federation.IngressType, `{spec: {rules: [{http: {paths: [{path: /, pathType: Prefix, backend: {serviceName: web, servicePort: 80}}]}}]}}`,
			[]string{"spec.rules[0].http.paths[0].backend.serviceName", "spec.rules[0].http.paths[0].backend.servicePort"}},
		{federation.ServiceType, `{spec: {ports: [{port: 80, targetPortt: 8080}]}}`, []string{"spec.ports[0].targetPortt"}},
		{federation.ConfigMapType, `{dataa: {k: v}}`, []string{"dataa"}},
		{federation.SecretType, `{stringData: {k: v}, typee: Opaque}`, []string{"typee"}},
		{federation.ServiceAccountType, `{automountServiceAccountTokenn: true}`, []string{"automountServiceAccountTokenn"}},
		{federation.JobType, `{spec: {template: {spec: {restartPolicy: Never, containers: [{name: j, image: j, imagePullPolicyy: Always}]}}}}`,
			[]string{"spec.template.spec.containers[0].imagePullPolicyy"}},
		{federation.PersistentVolumeClaimType, `{spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, storageClasss: x}}`, []string{"spec.storageClasss"}},
		{federation.NamespaceType, `{metadata: {labelz: {a: b}}}`, []string{"metadata.labelz"}},
		{federation.ConfigMapType, `{data: {k: v}}`, nil},
		{federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, ""), `{spec: {anything: 1}}`, nil},
	} {
		t.Run(tc.typ.Target.Kind, func(t *testing.T) {
			name := "web"
			if tc.typ.Target.Kind == "Namespace" {
				name = "shop"
			}
			var obj federation.FederatedObject
			doc := "metadata: {name: " + name + ", namespace: shop, generation: 1}\nspec: {template: " + tc.template + ", placement: {clusters: [{name: eu}]}}"
			require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
			federation.DefaultFederatedObject(&obj)
			fleet := fake.NewFleet()
			fleet.Add("eu", nil)
			d, err := plan.Decide(plan.Input{Type: tc.typ, Object: &obj, Clusters: fleet.Clusters(),
				Members: map[string]plan.MemberState{"eu": {}}, Revision: 1})
			require.NoError(t, err)
			require.Len(t, d.Changes, 1)
			require.Equal(t, plan.ActionCreate, d.Changes[0].Action)
			if diff := cmp.Diff(tc.want, d.Changes[0].Unknown); diff != "" {
				t.Errorf("Change.Unknown (-want +got):\n%s", diff)
			}
		})
	}
}
