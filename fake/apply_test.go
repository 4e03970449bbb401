package fake_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// fixtures is what a strategy test writes: a namespace, a Ready Cluster (status included),
// a federated object and its preference (a resource without a status subresource), with an
// empty document and comments in between.
const fixtures = `
# the namespace first: admission needs it
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: eu, labels: {region: europe-west1}}
spec: {apiEndpoint: "https://eu.example"}
status:
  conditions: [{type: Ready, status: "True", reason: Healthy, message: ok, lastTransitionTime: "2026-11-30T12:00:00Z"}]
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop}
spec:
  template: {spec: {replicas: 3}}
  placement: {clusters: [{name: eu}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: shop}
spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}
`

func TestApplyCreatesEveryDocument(t *testing.T) {
	host := fake.NewHost("host")
	require.NoError(t, host.Apply(fixtures))

	require.Empty(t, host.Actions(), "Apply is the test's hand: nothing recorded")
	_, err := host.Peek(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "shop")
	require.NoError(t, err)

	u, err := host.Peek(federation.ClusterGVR, "", "eu")
	require.NoError(t, err)
	c, err := federation.ClusterFromUnstructured(u)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"region": "europe-west1"}, c.Labels)
	require.Len(t, c.Status.Conditions, 1, "the status went through the status subresource")
	require.Equal(t, "Healthy", c.Status.Conditions[0].Reason)

	u, err = host.Peek(federation.DeploymentType.FederatedGVR(), "shop", "web")
	require.NoError(t, err)
	require.EqualValues(t, 1, u.GetGeneration())
	require.NotEmpty(t, u.GetUID())
	replicas := nested(t, u, "spec", "template", "spec", "replicas")
	require.Equal(t, int64(3), replicas, "numbers are int64, as from a real server")

	u, err = host.Peek(federation.ReplicaSchedulingPreferenceGVR, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, int64(9), nested(t, u, "spec", "totalReplicas"))
}

// TestApplyReplacesAnExistingObject: applying again replaces spec, labels and annotations,
// keeps what the server owns and the status, and an unchanged document writes nothing.
func TestApplyReplacesAnExistingObject(t *testing.T) {
	host := fake.NewHost("host")
	require.NoError(t, host.Apply(fixtures))
	gvr := federation.DeploymentType.FederatedGVR()
	before, err := host.Peek(gvr, "shop", "web")
	require.NoError(t, err)
	before.Object["status"] = map[string]any{"observedGeneration": int64(1)}
	require.NoError(t, host.Drift(gvr, "shop", "web", func(u *unstructured.Unstructured) { u.Object["status"] = before.Object["status"] }))
	rv := host.ResourceVersion()

	require.NoError(t, host.Apply(fixtures))
	require.Equal(t, rv, host.ResourceVersion(), "the same documents again: no write")

	require.NoError(t, host.Apply(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: shop, labels: {team: a}}
spec:
  template: {spec: {replicas: 5}}
`))
	after, err := host.Peek(gvr, "shop", "web")
	require.NoError(t, err)
	require.Equal(t, before.GetUID(), after.GetUID())
	require.Equal(t, before.GetCreationTimestamp(), after.GetCreationTimestamp())
	require.EqualValues(t, 2, after.GetGeneration(), "a spec change bumps the generation")
	require.Equal(t, map[string]string{"team": "a"}, after.GetLabels())
	require.Equal(t, int64(5), nested(t, after, "spec", "template", "spec", "replicas"))
	require.Nil(t, nestedOrNil(after, "spec", "placement"), "replaced, not merged")
	require.Equal(t, before.Object["status"], after.Object["status"], "the status subresource is kept")
}

// TestApplyDefaultsAndLists: a namespaced object without a namespace goes to "default", the
// items of a List are applied, and a CRD serves its kind to the documents after it.
func TestApplyDefaultsAndLists(t *testing.T) {
	c := fake.NewCluster("c")
	require.NoError(t, c.Apply(`
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {k: v}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: kube-system}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 2}}
`))
	var got []string
	for _, u := range c.Objects(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}) {
		got = append(got, u.GetNamespace()+"/"+u.GetName())
	}
	if diff := cmp.Diff([]string{"default/a", "kube-system/b"}, got); diff != "" {
		t.Errorf("config maps (-want +got):\n%s", diff)
	}
	g, err := c.Peek(gadgetGVR, "default", "g")
	require.NoError(t, err)
	require.Equal(t, int64(2), nested(t, g, "spec", "size"))
}

// TestApplyErrorsNameTheDocument: every failure names the document and keeps the API error's
// kind; the documents before it are applied, those after it are not.
func TestApplyErrorsNameTheDocument(t *testing.T) {
	cases := []struct {
		name, manifests string
		is              func(error) bool
		want            string
	}{
		{
			name:      "kind not served",
			manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n",
			is:        apierrors.IsNotFound,
			want:      "fake: apply document 2 (Gadget g): no resource serves example.com/v1, Kind=Gadget (create its CustomResourceDefinition first)",
		},
		{
			name:      "namespace missing",
			manifests: "---\n# empty documents are not counted\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: shop}\n",
			is:        apierrors.IsNotFound,
			want:      `fake: apply document 1 (ConfigMap shop/cm): namespaces "shop" not found`,
		},
		{
			name:      "invalid name",
			manifests: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_Valid}\n",
			is:        apierrors.IsInvalid,
			want:      "fake: apply document 1 (ConfigMap default/Not_Valid)",
		},
		{
			name:      "no kind",
			manifests: "apiVersion: v1\nmetadata: {name: x}\n",
			is:        apierrors.IsBadRequest,
			want:      "apiVersion and kind are required",
		},
		{
			name:      "not YAML",
			manifests: "kind: [unclosed\n",
			want:      "fake: apply: document 1 is not valid YAML",
		},
		{
			name:      "not an object",
			manifests: "---\n- a\n- b\n", // a leading separator opens no document
			want:      "fake: apply: document 1 is not an object",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewCluster("c")
			err := c.Apply(tc.manifests + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: after}\n")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				require.True(t, tc.is(err), "the API error is wrapped: %v", err)
			}
			_, err = c.Peek(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "after")
			require.True(t, apierrors.IsNotFound(err), "Apply stops at the first error")
		})
	}
}

// TestApplyIsStrict: Apply refuses, as `kubectl apply` with its default strict field
// validation does, a field the kind does not have (a built-in kind, or one of fedkit's) and
// a key twice in one mapping (a missing "---" that would merge two documents), naming the
// document, the line and the field. Nothing of the stream is written.
func TestApplyIsStrict(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{{
		name: "built-in kind",
		in: `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: shop}
dat: {k: v}
`,
		want: `fake: apply: document 2 (ConfigMap shop/web), line 8: unknown field "dat" (a ConfigMap has no such field)`,
	}, {
		name: "federated kind",
		in: `apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template: {spec: {replicas: 3, free: form}}
  palcement: {clusters: [{name: eu}]}
`,
		want: `fake: apply: document 1 (FederatedDeployment default/web), line 6: unknown field "spec.palcement" (a FederatedDeployment has no such field)`,
	}, {
		name: "missing separator",
		in: `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: default}
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: default}
`,
		want: `fake: apply: document 1 (ConfigMap default/b), line 4: duplicate key "apiVersion" (first at line 1): is a "---" line missing between two documents?`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			host := fake.NewHost("host")
			err := host.Apply(tc.in)
			if err == nil {
				t.Fatal("Apply accepted it")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
