package dnsrecord_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
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

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/federation"
)

var update = flag.Bool("update", false, "rewrite config/crd from the code")

// crdDir holds the installable CRD YAML of every fedkit package; this package owns the files
// of its two groups.
const crdDir = "../config/crd"

func ownFile(name string) bool {
	return strings.HasSuffix(name, "."+federation.DNSGroup+".yaml") || strings.HasSuffix(name, "."+dnsrecord.ExternalDNSGroup+".yaml")
}

// TestCRDFiles keeps config/crd in step with CRDs. Refresh with:
// go test ./dnsrecord -run TestCRDFiles -update
func TestCRDFiles(t *testing.T) {
	crds, err := dnsrecord.CRDs()
	require.NoError(t, err)
	want := map[string]bool{}
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		require.NoError(t, err)
		delete(m, "status")
		unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
		data, err := yaml.Marshal(m)
		require.NoError(t, err)
		file := filepath.Join(crdDir, crd.Name+".yaml")
		want[filepath.Base(file)] = true
		if *update {
			require.NoError(t, os.WriteFile(file, data, 0o644))
			continue
		}
		got, err := os.ReadFile(file)
		require.NoError(t, err, "run: go test ./dnsrecord -run TestCRDFiles -update")
		if !bytes.Equal(got, data) {
			t.Errorf("%s is out of date with the code; run: go test ./dnsrecord -run TestCRDFiles -update\n%s", file, cmp.Diff(string(got), string(data)))
		}
	}
	entries, err := os.ReadDir(crdDir)
	require.NoError(t, err)
	for _, e := range entries {
		if ownFile(e.Name()) && !want[e.Name()] {
			t.Errorf("%s/%s is not produced by the code any more; delete it", crdDir, e.Name())
		}
	}
}

// TestCRDs checks what the API server checks before it accepts a CRD (structural schema,
// approval annotation, names) and the shapes the controller relies on.
func TestCRDs(t *testing.T) {
	crds, err := dnsrecord.CRDs()
	require.NoError(t, err)
	var names []string
	for _, crd := range crds {
		names = append(names, crd.Name)
		t.Run(crd.Name, func(t *testing.T) {
			require.Equal(t, crd.Spec.Names.Plural+"."+crd.Spec.Group, crd.Name)
			require.True(t, strings.HasSuffix(crd.Spec.Group, ".k8s.io"), "so the approval annotation is required")
			require.NotEmpty(t, crd.Annotations[federation.ApprovalAnnotation])
			require.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
			require.Len(t, crd.Spec.Versions, 1)
			v := crd.Spec.Versions[0]
			require.True(t, v.Served && v.Storage)
			require.Equal(t, "v1alpha1", v.Name)
			internal := &apiextensions.JSONSchemaProps{}
			require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil))
			s, err := structuralschema.NewStructural(internal)
			require.NoError(t, err)
			require.Empty(t, structuralschema.ValidateStructural(nil, s), "schema must be structural")
			if crd.Spec.Names.Kind != "Domain" {
				require.NotNil(t, v.Subresources.Status, "status must be a subresource")
			}
		})
	}
	require.Equal(t, []string{
		"servicednsrecords.multiclusterdns.federation.k8s.io", "ingressdnsrecords.multiclusterdns.federation.k8s.io",
		"domains.multiclusterdns.federation.k8s.io", "dnsendpoints.externaldns.k8s.io",
	}, names)

	de, err := dnsrecord.DNSEndpointCRD()
	require.NoError(t, err)
	require.Equal(t, "https://github.com/kubernetes-sigs/external-dns/pull/2007", de.Annotations[federation.ApprovalAnnotation],
		"external-dns's own approval, so the two CRDs are interchangeable")
	require.Equal(t, dnsrecord.DNSEndpointGVK.Kind, de.Spec.Names.Kind)
	require.Equal(t, dnsrecord.ExternalDNSGroup, de.Spec.Group)
	rec, err := dnsrecord.ServiceDNSRecordCRD()
	require.NoError(t, err)
	require.Equal(t, "unapproved, experimental-only", rec.Annotations[federation.ApprovalAnnotation])
}

// TestGeneratedUpToDate runs controller-gen into a temporary directory and compares its output
// with the committed deep copies and CRD schemas, so a type change without `make generate`
// fails CI instead of shipping stale code.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen")
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
	generated, err := filepath.Glob(filepath.Join(tmp, "crds", "*.yaml"))
	require.NoError(t, err)
	for _, f := range generated {
		files = append(files, filepath.Join("crds", filepath.Base(f)))
	}
	committed, _ := filepath.Glob("crds/*.yaml")
	if len(committed) != len(generated) {
		t.Errorf("crds/ has %d files, controller-gen makes %d; run make generate", len(committed), len(generated))
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(tmp, f))
		require.NoError(t, err)
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v; run make generate", f, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run make generate", f)
		}
	}
}
