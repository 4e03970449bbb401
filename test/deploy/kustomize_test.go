package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// configDir is the module's config/, from this package's directory.
var configDir = filepath.Join("..", "..", "config")

// kustomization is the part of kustomize's Kustomization that fedkit's config/ uses: a list
// of resources (files, and folders with a kustomization of their own). render refuses any
// other field, so a transformer added to config/ fails here instead of being skipped.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// kustomizationFile is the kustomization of dir, under one of the names kustomize reads.
func kustomizationFile(t *testing.T, dir string) string {
	t.Helper()
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name)
		}
	}
	t.Fatalf("%s has no kustomization", dir)
	return ""
}

// render is `kustomize build dir` for kustomizations of resources only: the objects of every
// resource, in order, a folder's through its own kustomization. Like kustomize, it refuses
// files outside the kustomization's folder and an object twice.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	var k kustomization
	file := kustomizationFile(t, dir)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("%s: %v (this test renders kustomizations of resources only)", file, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("%s: %s %s; want a kustomize.config.k8s.io/v1beta1 Kustomization", file, k.APIVersion, k.Kind)
	}
	var out []*unstructured.Unstructured
	seen := map[string]string{}
	for _, r := range k.Resources {
		path := filepath.Join(dir, r)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatalf("%s: resource %s: %v", file, r, err)
		}
		var objs []*unstructured.Unstructured
		switch {
		case info.IsDir():
			objs = render(t, path)
		case strings.HasPrefix(r, ".."):
			t.Fatalf("%s: resource %s is outside the kustomization's folder, which kustomize refuses", file, r)
		default:
			objs = documents(t, path)
		}
		for _, o := range objs {
			id := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
			if from, ok := seen[id]; ok {
				t.Fatalf("%s: %s comes from %s and %s", file, id, from, r)
			}
			seen[id] = r
		}
		out = append(out, objs...)
	}
	return out
}

// documents are the objects of a YAML file (documents of comments only are skipped).
func documents(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// ids are the objects as "Kind namespace/name", sorted.
func ids(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(out)
	return out
}

// config/default is everything a host needs: every CRD of config/crd, every object of
// config/rbac (the ServiceAccount, its roles and bindings, the admission policy), and
// config/manager's Namespace, Deployment and PodDisruptionBudget; nothing else.
func TestDefaultKustomization(t *testing.T) {
	var want []*unstructured.Unstructured
	for _, dir := range []string{"crd", "rbac", "manager"} {
		files, err := filepath.Glob(filepath.Join(configDir, dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if filepath.Base(f) != "kustomization.yaml" {
				want = append(want, documents(t, f)...)
			}
		}
	}
	got := render(t, filepath.Join(configDir, "default"))
	if diff := cmp.Diff(ids(want), ids(got)); diff != "" {
		t.Errorf("config/default renders (-every file of config/crd, config/rbac, config/manager +got):\n%s", diff)
	}
	kinds := map[string]int{}
	for _, o := range got {
		kinds[o.GetKind()]++
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding",
		"ValidatingAdmissionPolicy", "CustomResourceDefinition", "Deployment", "PodDisruptionBudget"} {
		if kinds[k] == 0 {
			t.Errorf("config/default has no %s", k)
		}
	}
}

// config/crd's Kustomization lists every CRD file there, so config/default installs what
// `kubectl apply -f config/crd/` does.
func TestCRDKustomizationListsEveryCRD(t *testing.T) {
	var k kustomization
	data, err := os.ReadFile(kustomizationFile(t, filepath.Join(configDir, "crd")))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(configDir, "crd", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, filepath.Base(f))
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config/crd/Kustomization's resources (-files in config/crd +listed); list every CRD file:\n%s", diff)
	}
}
