package federation_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

var update = flag.Bool("update", false, "rewrite config/crd from the code")

// crdDir holds the installable CRD YAML, generated from the code and checked by TestCRDFiles.
const crdDir = "../config/crd"

// TestCRDFiles keeps config/crd in sync with ClusterCRD, ReplicaSchedulingPreferenceCRD and
// CRDFor(BuiltinTypes()). Refresh with: go test ./federation -run TestCRDFiles -update
func TestCRDFiles(t *testing.T) {
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	want := map[string]bool{}
	for _, crd := range crds {
		data := crdYAML(t, crd)
		file := filepath.Join(crdDir, crd.Name+".yaml")
		want[filepath.Base(file)] = true
		if *update {
			require.NoError(t, os.WriteFile(file, data, 0o644))
			continue
		}
		got, err := os.ReadFile(file)
		require.NoError(t, err, "run: go test ./federation -run TestCRDFiles -update")
		if !bytes.Equal(got, data) {
			t.Errorf("%s is out of date with the code; run: go test ./federation -run TestCRDFiles -update\n%s", file, cmp.Diff(string(got), string(data)))
		}
	}
	entries, err := os.ReadDir(crdDir)
	require.NoError(t, err)
	for _, e := range entries {
		// config/crd also holds the CRDs of package dnsrecord, which checks its own files.
		own := strings.HasSuffix(e.Name(), "."+federation.CoreGroup+".yaml") || strings.HasSuffix(e.Name(), "."+federation.TypesGroup+".yaml")
		if own && !want[e.Name()] {
			t.Errorf("%s/%s is not produced by the code any more; delete it", crdDir, e.Name())
		}
	}
}

// crdYAML renders a CRD as installable YAML, without the empty status and creationTimestamp
// that a typed object marshals.
func crdYAML(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) []byte {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	delete(m, "status")
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	data, err := yaml.Marshal(m)
	require.NoError(t, err)
	return data
}

// TestCRDsStructural checks what the API server checks before it accepts a CRD: a structural
// schema, the approval annotation for *.k8s.io groups, and consistent names.
func TestCRDsStructural(t *testing.T) {
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	for _, crd := range crds {
		t.Run(crd.Name, func(t *testing.T) {
			require.Equal(t, crd.Spec.Names.Plural+"."+crd.Spec.Group, crd.Name)
			require.True(t, strings.HasSuffix(crd.Spec.Group, ".k8s.io"))
			require.Equal(t, "unapproved, experimental-only", crd.Annotations[federation.ApprovalAnnotation])
			require.Len(t, crd.Spec.Versions, 1)
			v := crd.Spec.Versions[0]
			require.True(t, v.Served && v.Storage)
			internal := &apiextensions.JSONSchemaProps{}
			require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil))
			s, err := structuralschema.NewStructural(internal)
			require.NoError(t, err)
			require.Empty(t, structuralschema.ValidateStructural(nil, s), "schema must be structural")
		})
	}
}

func TestCRDFor(t *testing.T) {
	crd, err := federation.CRDFor(federation.DeploymentType)
	require.NoError(t, err)
	require.Equal(t, "federateddeployments.types.federation.k8s.io", crd.Name)
	require.Equal(t, apiextensionsv1.CustomResourceDefinitionNames{
		Kind: "FederatedDeployment", ListKind: "FederatedDeploymentList", Plural: "federateddeployments",
		Singular: "federateddeployment", Categories: []string{"federation"}, ShortNames: []string{"fdeploy"},
	}, crd.Spec.Names)
	require.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
	v := crd.Spec.Versions[0]
	require.NotNil(t, v.Subresources.Status, "status must be a subresource")
	tmpl := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["template"]
	require.True(t, *tmpl.XPreserveUnknownFields, "template must preserve unknown fields")
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, c.Name)
	}
	require.Equal(t, []string{"Scheduled", "Propagated", "Ready", "Clusters", "Ready Replicas", "Desired", "Revision", "Reason", "Age"}, cols)
	// Free-form only where any shape fits: the template, an override's value, a member's
	// status; placement, overrides and the rest are structural, so the server prunes or
	// (with strict field validation) refuses unknown fields there.
	require.Equal(t, []string{
		".spec.overrides[].clusterOverrides[].value",
		".spec.template",
		".status.clusters[].remoteStatus",
	}, preserved(v.Schema.OpenAPIV3Schema, ""))

	_, err = federation.CRDFor(federation.TypeConfig{})
	require.ErrorIs(t, err, federation.ErrUnknownType)
}

// preserved lists, sorted, the paths of a schema that preserve unknown fields.
func preserved(s *apiextensionsv1.JSONSchemaProps, path string) []string {
	var out []string
	if s == nil {
		return nil
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		out = append(out, path)
	}
	for name, p := range s.Properties {
		out = append(out, preserved(&p, path+"."+name)...)
	}
	if s.Items != nil {
		out = append(out, preserved(s.Items.Schema, path+"[]")...)
	}
	if s.AdditionalProperties != nil {
		out = append(out, preserved(s.AdditionalProperties.Schema, path+".*")...)
	}
	sort.Strings(out)
	return out
}

// TestDesignYAML decodes the contract YAML shapes (ARCHITECTURE.md) strictly (an unknown or misspelled
// field fails) and round-trips them through unstructured.
func TestDesignYAML(t *testing.T) {
	data, err := os.ReadFile("testdata/design.yaml")
	require.NoError(t, err)
	docs := strings.Split(string(data), "\n---\n")
	require.Len(t, docs, 3)

	fed := &federation.FederatedObject{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[0]), fed))
	require.Empty(t, federation.ValidateFederatedObject(fed))
	require.Equal(t, int64(6), fed.Spec.Template.Object["spec"].(map[string]any)["replicas"])
	v, err := fed.Spec.Overrides[0].ClusterOverrides[0].Value.Decode()
	require.NoError(t, err)
	require.Equal(t, int64(4), v)

	cluster := &federation.Cluster{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[1]), cluster))
	require.Empty(t, federation.ValidateCluster(cluster))
	require.Equal(t, "ca-bundle", string(cluster.Spec.CABundle))

	rsp := &federation.ReplicaSchedulingPreference{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[2]), rsp))
	require.Empty(t, federation.ValidateReplicaSchedulingPreference(rsp))
	require.Equal(t, int64(6), *rsp.Spec.Clusters["cluster-aws-us-east"].MaxReplicas)

	u, err := federation.ToUnstructured(cluster)
	require.NoError(t, err)
	back, err := federation.ClusterFromUnstructured(u)
	require.NoError(t, err)
	if diff := cmp.Diff(cluster, back); diff != "" {
		t.Errorf("Cluster round trip (-want +got):\n%s", diff)
	}
	u, err = federation.ToUnstructured(rsp)
	require.NoError(t, err)
	backRSP, err := federation.ReplicaSchedulingPreferenceFromUnstructured(u)
	require.NoError(t, err)
	if diff := cmp.Diff(rsp, backRSP); diff != "" {
		t.Errorf("RSP round trip (-want +got):\n%s", diff)
	}
	u, err = federation.ToUnstructured(fed)
	require.NoError(t, err)
	backFed, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	if diff := cmp.Diff(fed, backFed); diff != "" {
		t.Errorf("FederatedObject round trip (-want +got):\n%s", diff)
	}
}

// TestGeneratedUpToDate runs controller-gen into a temporary directory and compares its output
// with the committed deep copies and CRD schemas, so a type change without `make generate`
// fails CI instead of shipping stale code.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen (about a minute cold)")
	}
	tmp := t.TempDir()
	for _, args := range [][]string{
		{"tool", "controller-gen", "object", "paths=./", "output:object:dir=" + tmp},
		{"tool", "controller-gen", "crd:allowDangerousTypes=false", "paths=./", "output:crd:dir=" + filepath.Join(tmp, "crds")},
	} {
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	files := []string{"zz_generated.deepcopy.go"}
	crds, err := filepath.Glob(filepath.Join(tmp, "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range crds {
		files = append(files, filepath.Join("crds", filepath.Base(f)))
	}
	committed, _ := filepath.Glob("crds/*.yaml")
	if len(committed) != len(crds) {
		t.Errorf("crds/ has %d files, controller-gen makes %d; run make generate", len(committed), len(crds))
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v; run make generate", f, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run make generate", f)
		}
	}
}
