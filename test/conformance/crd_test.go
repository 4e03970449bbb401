package conformance_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/conformance"
)

// readObjects reads every YAML document of path as an unstructured object (numbers as int64,
// as the API machinery expects).
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "---" {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(js), "%s", doc)
		out = append(out, u)
	}
}

// TestCRDsServe checks that every CRD fedkit ships is Established and served at the version
// the Go types use, both as federation.CRDs returns them and as config/crd/*.yaml has them.
func TestCRDsServe(t *testing.T) {
	c := realClient(t)
	ctx := t.Context()

	// config/crd holds the same CRDs as files for kubectl users; applying them over the
	// installed ones must be accepted too.
	files, err := filepath.Glob("../../config/crd/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var fromFiles []*apiextensionsv1.CustomResourceDefinition
	var fileNames []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.UnmarshalStrict(data, crd), f)
		fromFiles = append(fromFiles, crd)
		fileNames = append(fileNames, crd.Name)
	}
	start := time.Now()
	require.NoError(t, conformance.InstallCRDs(ctx, c, fromFiles...))
	t.Logf("install from files: %s", time.Since(start))

	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	dns, err := dnsrecord.CRDs()
	require.NoError(t, err)
	crds = append(crds, dns...)
	var names []string
	for _, crd := range crds {
		names = append(names, crd.Name)
		for _, v := range crd.Spec.Versions {
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			m, err := c.RESTMapping(gvk)
			require.NoError(t, err, "%s is not served", gvk)
			require.Equal(t, federation.Version, m.Resource.Version, "%s: served version", crd.Name)
			require.Equal(t, crd.Spec.Names.Plural, m.Resource.Resource)
		}
	}
	sort.Strings(names)
	sort.Strings(fileNames)
	if diff := cmp.Diff(names, fileNames); diff != "" {
		t.Errorf("config/crd and federation.CRDs with dnsrecord.CRDs differ (-CRDs +files):\n%s", diff)
	}
	for _, gvk := range []schema.GroupVersionKind{federation.ClusterGVK, federation.ReplicaSchedulingPreferenceGVK, federation.DeploymentType.Federated} {
		_, err := c.RESTMapping(gvk)
		require.NoError(t, err, "the Go types' GVK %s must be served", gvk)
	}
	_, err = c.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	require.NoError(t, err, "federation.ClusterGVR is served")
}

// TestDesignYAMLAccepted creates every object of federation/testdata/design.yaml (the shapes
// of the user's specification) and writes its status, and checks that nothing was pruned:
// what is read back is what was written, apart from server-set metadata.
func TestDesignYAMLAccepted(t *testing.T) {
	c := realClient(t)
	ctx := t.Context()
	objs := readObjects(t, "../../federation/testdata/design.yaml")
	require.NotEmpty(t, objs)
	for _, obj := range objs {
		t.Run(obj.GetKind()+"/"+obj.GetName(), func(t *testing.T) {
			m, err := c.RESTMapping(obj.GroupVersionKind())
			require.NoError(t, err)
			if ns := obj.GetNamespace(); ns != "" {
				nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
				if _, err := c.Create(ctx, conformance.NamespaceGVR, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
					require.NoError(t, err)
				}
			}
			want := obj.DeepCopy()
			created, err := c.Create(ctx, m.Resource, obj.DeepCopy())
			require.NoError(t, err, "the schema must accept the documented shape")
			if diff := cmp.Diff(want.Object["spec"], created.Object["spec"]); diff != "" {
				t.Errorf("spec was changed or pruned (-want +got):\n%s", diff)
			}
			if status, ok := want.Object["status"]; ok {
				created.Object["status"] = status
				updated, err := c.UpdateStatus(ctx, m.Resource, created)
				require.NoError(t, err, "the schema must accept the documented status")
				if diff := cmp.Diff(status, updated.Object["status"]); diff != "" {
					t.Errorf("status was changed or pruned (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestSchemaRejectsInvalid checks that the CRD schemas, not only fedkit's Go validation,
// reject malformed objects, so a bad kubectl apply fails at the API server.
func TestSchemaRejectsInvalid(t *testing.T) {
	c := realClient(t)
	ctx := t.Context()
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "schema"}}}
	if _, err := c.Create(ctx, conformance.NamespaceGVR, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	const (
		cluster = "apiVersion: core.federation.k8s.io/v1alpha1\nkind: Cluster\nmetadata: {name: bad}\n"
		fed     = "apiVersion: types.federation.k8s.io/v1alpha1\nkind: FederatedDeployment\nmetadata: {name: bad, namespace: schema}\n"
		rsp     = "apiVersion: core.federation.k8s.io/v1alpha1\nkind: ReplicaSchedulingPreference\nmetadata: {name: bad, namespace: schema}\n"
	)
	tests := []struct {
		name    string
		yaml    string
		wantMsg string // part of the API server's message: the field at fault
	}{
		{"Cluster without spec.apiEndpoint", cluster + "spec: {region: eu}", "spec.apiEndpoint: Required value"},
		{"Cluster without a spec", cluster, "spec"},
		{"Cluster with an empty apiEndpoint", cluster + "spec: {apiEndpoint: ''}", "spec.apiEndpoint"},
		{"Cluster with a numeric apiEndpoint", cluster + "spec: {apiEndpoint: 6443}", "spec.apiEndpoint"},
		{"Cluster with zones as a string", cluster + "spec: {apiEndpoint: 'https://x', zones: eu-1a}", "spec.zones"},
		{"Cluster secretRef without a name", cluster + "spec: {apiEndpoint: 'https://x', secretRef: {}}", "spec.secretRef.name"},
		{"Cluster taint without an effect", cluster + "spec: {apiEndpoint: 'https://x', taints: [{key: k}]}", "spec.taints[0].effect"},
		{"Cluster with insecureSkipTLSVerify as a string", cluster + "spec: {apiEndpoint: 'https://x', insecureSkipTLSVerify: 'yes'}", "spec.insecureSkipTLSVerify"},
		{"FederatedDeployment with an unknown override op", fed + "spec: {template: {}, overrides: [{clusterName: a, clusterOverrides: [{op: frobnicate, path: /spec/replicas, value: 1}]}]}", "op"},
		{"FederatedDeployment override without a path", fed + "spec: {template: {}, overrides: [{clusterName: a, clusterOverrides: [{op: replace, value: 1}]}]}", "path"},
		{"FederatedDeployment with placement.clusters as a string", fed + "spec: {template: {}, placement: {clusters: a}}", "spec.placement.clusters"},
		{"FederatedDeployment with a rollout stage of 101 percent", fed + "spec: {template: {}, rollout: {stages: [{percentage: 101}]}}", "spec.rollout.stages[0].percentage"},
		{"FederatedDeployment with a rollout stage naming clusters in a string", fed + "spec: {template: {}, rollout: {stages: [{clusters: a}]}}", "spec.rollout.stages[0].clusters"},
		{"RSP without totalReplicas", rsp + "spec: {targetKind: FederatedDeployment}", "spec.totalReplicas: Required value"},
		{"RSP with totalReplicas as a word", rsp + "spec: {targetKind: FederatedDeployment, totalReplicas: nine}", "spec.totalReplicas"},
		{"RSP with a weight as a word", rsp + "spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {a: {weight: heavy}}}", "weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(tt.yaml))
			require.NoError(t, err)
			u := &unstructured.Unstructured{}
			require.NoError(t, u.UnmarshalJSON(js))
			m, err := c.RESTMapping(u.GroupVersionKind())
			require.NoError(t, err)
			_, err = c.Create(ctx, m.Resource, u)
			require.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
			require.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}
