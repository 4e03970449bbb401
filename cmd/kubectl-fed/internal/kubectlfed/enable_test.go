package kubectlfed

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// TestSchemaFromOpenAPI: a built-in kind's OpenAPI v3 schema made structural, as a CRD's must
// be: references and allOf wrappers inlined, defaults and patch strategies dropped,
// int-or-string and Quantity as x-kubernetes-int-or-string, RawExtension and recursive types
// preserving unknown fields.
func TestSchemaFromOpenAPI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "openapi-apps-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := schemaFromOpenAPI(data, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := sigsyaml.Marshal(federation.TemplateSchema(s))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openapi-deployment-template.yaml", string(out))
	if _, err := schemaFromOpenAPI(data, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}); err == nil {
		t.Error("a kind the document lacks: no error")
	}
}

const widgetRules = `
ready: "has(self.status) && has(self.status.phase) && self.status.phase == 'Running'"
message: "has(self.status) && has(self.status.phase) ? 'phase ' + self.status.phase : 'no phase reported'"
readyReplicas: "has(self.status) && has(self.status.readyReplicas) ? self.status.readyReplicas : 0"
status: {phase: "has(self.status) && has(self.status.phase) ? self.status.phase : 'unknown'"}
dependencies: [{kind: ConfigMap, names: "has(self.spec.configRef) ? [self.spec.configRef] : []"}]
`

// TestEnableCommand: enable reads a custom resource's schema from its CRD and writes the
// FederatedWidget CRD with it under spec.template, the FederatedTypeConfig with the rules it
// compiled first, and prints the RBAC; a second run changes nothing; bad rules are refused
// naming the rule. The verbs then know the type: get shows each member by the kind's rules.
// disable removes the configuration and leaves every member object as it was; --delete-crd
// is refused while a FederatedWidget is left.
func TestEnableCommand(t *testing.T) {
	f := newFleet(t)
	eu, us := f.Member(t, "eu"), f.Member(t, "us")
	fedtest.InstallWidgets(t, f.Host, eu, us)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, []byte(widgetRules), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`ready: "self.status.phase =="`), 0o600); err != nil {
		t.Fatal(err)
	}

	// --dry-run: what would be written, the CRD shown by its names and template schema.
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"enable", "widgets.example.com", "--rules", rules, "--dry-run"},
		Options{Stdout: &out, Stderr: &errOut, Clock: f.Clock, Host: f.Host, Clusters: f.Fleet})
	if code != 0 {
		t.Fatalf("enable --dry-run: exit %d: %s", code, errOut.String())
	}
	f.note("kubectl fed enable widgets.example.com --rules rules.yaml --dry-run, the documents it prints:")
	summarize(t, &f.out, out.String())
	if _, err := f.Host.Get(context.Background(), federation.FederatedTypeConfigGVR, "", "widgets.example.com"); err == nil {
		t.Fatal("enable --dry-run wrote the FederatedTypeConfig")
	}

	f.kubectl(t, "enable", "widgets.example.com", "--rules", bad)
	f.kubectl(t, "enable", "gadgets.example.com")
	f.kubectl(t, "enable", "widgets.example.com", "--rules", rules)
	f.show(t, f.Host, federation.FederatedTypeConfigGVR, "", "widgets.example.com")
	f.kubectl(t, "enable", "widgets.example.com", "--rules", rules)

	typ := fedtest.WidgetType
	typ.Rules, _ = readRules(rules)
	fedtest.Create(t, f.Host, typ.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedWidget
metadata: {name: blue, namespace: shop}
spec:
  template: {spec: {replicas: 2, color: blue, configRef: settings}}
  placement: {clusterSelector: {}}
  overrides: [{clusterName: us, clusterOverrides: [{op: add, path: /spec/size, value: large}]}]
`)
	key := federation.Key{Namespace: "shop", Name: "blue"}
	f.converge(t, typ, key)
	w, err := eu.Get(context.Background(), typ.TargetGVR(), "shop", "blue")
	if err != nil {
		t.Fatalf("%v\n%s", err, f.out.String())
	}
	_ = unstructured.SetNestedMap(w.Object, map[string]any{"phase": "Running", "readyReplicas": int64(2)}, "status")
	if _, err := eu.UpdateStatus(context.Background(), typ.TargetGVR(), w); err != nil {
		t.Fatal(err)
	}
	f.converge(t, typ, key)
	f.kubectl(t, "get", "federatedwidget/blue", "-n", "shop")
	f.kubectl(t, "status", "federatedwidget/blue", "-n", "shop")

	before := map[string]string{}
	for _, m := range []string{"eu", "us"} {
		u, err := f.Member(t, m).Get(context.Background(), typ.TargetGVR(), "shop", "blue")
		if err != nil {
			t.Fatalf("%s: %v\n%s", m, err, f.out.String())
		}
		before[m] = u.GetResourceVersion()
	}
	f.kubectl(t, "disable", "widgets.example.com", "--delete-crd")
	f.kubectl(t, "disable", "widgets.example.com", "--dry-run")
	f.kubectl(t, "disable", "widgets.example.com")
	for _, m := range []string{"eu", "us"} {
		u, err := f.Member(t, m).Get(context.Background(), typ.TargetGVR(), "shop", "blue")
		if err != nil || u.GetResourceVersion() != before[m] {
			t.Errorf("after disable, %s's widget: %v, resourceVersion %s (was %s); want it untouched", m, err, u.GetResourceVersion(), before[m])
		}
	}
	f.kubectl(t, "get", "federatedwidget/blue", "-n", "shop")
	golden(t, "enable.txt", strings.ReplaceAll(f.out.String(), dir, "$DIR"))
}

// summarize writes the kind and name of each YAML document of out, a CRD's spec.template
// schema, and the other documents whole.
func summarize(t *testing.T, w *bytes.Buffer, out string) {
	t.Helper()
	d := yaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			break
		}
		if m == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() != "CustomResourceDefinition" {
			data, _ := sigsyaml.Marshal(m)
			w.WriteString("---\n" + string(data))
			continue
		}
		versions, _, _ := unstructured.NestedSlice(m, "spec", "versions")
		tmpl, _, _ := unstructured.NestedFieldNoCopy(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "template")
		names, _, _ := unstructured.NestedMap(m, "spec", "names")
		data, _ := sigsyaml.Marshal(map[string]any{"names": names, "spec.template": tmpl})
		w.WriteString("--- CustomResourceDefinition " + u.GetName() + "\n" + string(data))
	}
}
