package migrate_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/migrate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestConvertGolden converts testdata/kubefed.yaml (one object of each kind, and the cases that
// do not carry over) and compares the fedkit objects, the TypeConfigs and the warnings with
// the golden file.
func TestConvertGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kubefed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, out := convert(t, data)
	compareGolden(t, filepath.Join("testdata", "fedkit.golden.yaml"), report(out, res))
	// The converted objects are what fedkit's own decoding accepts: every one round-trips
	// through the scheme.
	for _, o := range res.Objects() {
		if _, err := federation.ToUnstructured(o); err != nil {
			t.Errorf("%T: %v", o, err)
		}
	}
}

// convert decodes and converts the stream data with the default options, and returns the
// result and its YAML.
func convert(t *testing.T, data []byte) (migrate.Result, []byte) {
	t.Helper()
	objs, err := migrate.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	out, err := res.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return res, out
}

// report is the converted stream followed by the TypeConfigs and the warnings as comments,
// each loss marked.
func report(out []byte, res migrate.Result) string {
	var b strings.Builder
	b.Write(out)
	b.WriteString("# TypeConfigs:\n")
	for _, tc := range res.TypeConfigs {
		fmt.Fprintf(&b, "#   %s resource=%s namespaced=%v replicas=%q\n", tc, tc.TargetResource, tc.Namespaced, tc.ReplicasPath)
	}
	b.WriteString("# Warnings:\n")
	for _, w := range res.Warnings {
		mark := ""
		if w.Loss {
			mark = "[loss] "
		}
		fmt.Fprintf(&b, "#   %s%s\n", mark, w)
	}
	return b.String()
}

// compareGolden compares got with the golden file, which -update rewrites.
func compareGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./migrate -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("converted objects differ from %s (-want +got):\n%s", golden, diff)
	}
}

func TestConvertedPreferenceIsNotDefaultedAway(t *testing.T) {
	// fedkit defaults a missing minReplicas to 1, KubeFed's was 0: the conversion writes each
	// one out, so defaulting on the API server changes no plan.
	objs, err := migrate.Decode(strings.NewReader(`
apiVersion: scheduling.kubefed.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: a, namespace: ns}
spec: {targetKind: FederatedDeployment, totalReplicas: 3, clusters: {x: {weight: 1}, y: {maxReplicas: 0}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	if len(res.Preferences) != 1 {
		t.Fatalf("got %d preferences; want 1 (warnings %v)", len(res.Preferences), res.Warnings)
	}
	before := res.Preferences[0].DeepCopy()
	federation.DefaultReplicaSchedulingPreference(&res.Preferences[0])
	if diff := cmp.Diff(before.Spec.Clusters, res.Preferences[0].Spec.Clusters); diff != "" {
		t.Errorf("defaulting changed the converted clusters (-converted +defaulted):\n%s", diff)
	}
	if got := res.Preferences[0].Spec.Algorithm; got != federation.AlgorithmKubeFed {
		t.Errorf("algorithm = %q; want %q", got, federation.AlgorithmKubeFed)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not yaml", "a: [", "document 1"},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", "document 1 has no apiVersion or kind"},
		{"second document", "apiVersion: v1\nkind: Secret\n---\nkind: X\n", "document 2 has no apiVersion or kind"},
		// A missing "---": the second object's keys would silently win.
		{"duplicate key", "apiVersion: core.kubefed.io/v1beta1\nkind: KubeFedCluster\nmetadata: {name: a}\napiVersion: v1\nkind: Secret\n", "duplicate key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := migrate.Decode(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode error = %v; want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBadObjectIsAWarningNamingIt(t *testing.T) {
	objs, err := migrate.Decode(strings.NewReader(`
apiVersion: scheduling.kubefed.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: bad, namespace: ns}
spec: {targetKind: FederatedDeployment, totalReplicas: "many"}
`))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	if len(res.Preferences) != 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].String(), "ReplicaSchedulingPreference ns/bad: not converted") {
		t.Fatalf("got %d preferences, warnings %v; want none and one warning naming ns/bad", len(res.Preferences), res.Warnings)
	}
}

// TestSameConstantsAsClusterSet: the Secret namespace and key match what federation/kube reads.
func TestSameConstantsAsClusterSet(t *testing.T) {
	if migrate.DefaultSecretNamespace != kube.DefaultNamespace {
		t.Errorf("DefaultSecretNamespace = %q; kube.DefaultNamespace = %q", migrate.DefaultSecretNamespace, kube.DefaultNamespace)
	}
	objs, _ := migrate.Decode(strings.NewReader(`
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: c, namespace: kf}
spec: {apiEndpoint: "https://c", secretRef: {name: s}}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: kf}
data: {token: dA==}
`))
	res := migrate.Convert(objs, migrate.Options{SecretNamespace: "fed"})
	if len(res.Secrets) != 1 {
		t.Fatalf("got %d secrets; warnings %v", len(res.Secrets), res.Warnings)
	}
	s := res.Secrets[0]
	if _, ok := s.Data[kube.TokenKey]; !ok || s.Namespace != "fed" || s.Labels[federation.SecretClusterLabel] != "c" {
		t.Errorf("secret = %s/%s labels %v keys %v; want fed/s labelled %s=c with key %q", s.Namespace, s.Name, s.Labels, s.Data, federation.SecretClusterLabel, kube.TokenKey)
	}
}

// TestMigratedObjectsCarryKubeFedsOrphanAndAdoption: kubefed.io/orphan becomes
// federation.OrphanAnnotation, and every converted federated object is marked as migrated
// from KubeFed, which makes sync adopt the member objects KubeFed labelled.
func TestMigratedObjectsCarryKubeFedsOrphanAndAdoption(t *testing.T) {
	objs, err := migrate.Decode(strings.NewReader(`
apiVersion: types.kubefed.io/v1beta1
kind: FederatedConfigMap
metadata: {name: a, namespace: ns, annotations: {kubefed.io/orphan: "true", team: x}}
spec: {template: {data: {k: v}}, placement: {clusters: [{name: c}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	if len(res.Federated) != 1 || len(res.Warnings) != 0 {
		t.Fatalf("got %d federated objects, warnings %v; want one and none", len(res.Federated), res.Warnings)
	}
	want := map[string]string{
		federation.OrphanAnnotation:       "true",
		federation.MigratedFromAnnotation: federation.MigratedFromKubeFed,
		"team":                            "x",
	}
	if diff := cmp.Diff(want, res.Federated[0].Annotations); diff != "" {
		t.Errorf("annotations differ (-want +got):\n%s", diff)
	}
}

// TestTemplateFieldsTheTypeLacksAreLosses: a template field fedkit's target type does not
// have is a loss naming it (a member's API server would drop it); a KubeFed Ingress in the
// extensions/v1beta1 form is converted to networking.k8s.io/v1 first, so only what does not
// convert is lost.
func TestTemplateFieldsTheTypeLacksAreLosses(t *testing.T) {
	objs, err := migrate.Decode(strings.NewReader(`
apiVersion: types.kubefed.io/v1beta1
kind: FederatedDeployment
metadata: {name: web, namespace: ns}
spec:
  template:
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: nginx, imagePullPolicyy: Always}]}
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedIngress
metadata: {name: web, namespace: ns}
spec:
  template:
    spec:
      backend: {serviceName: default, servicePort: http}
      rules:
      - http:
          paths:
          - {path: /, backend: {serviceName: web, servicePort: 80}}
          - {path: /x, pathType: Prefix, backend: {serviceName: x, servicePort: 81, weight: 3}}
`))
	if err != nil {
		t.Fatal(err)
	}
	res := migrate.Convert(objs, migrate.Options{})
	var losses []string
	for _, w := range res.Losses() {
		losses = append(losses, w.Object+": "+w.Field)
	}
	want := []string{
		"FederatedDeployment ns/web: spec.template.spec.template.spec.containers[0].imagePullPolicyy",
		"FederatedIngress ns/web: spec.template.spec.rules[0].http.paths[1].backend.weight",
	}
	if diff := cmp.Diff(want, losses); diff != "" {
		t.Errorf("losses differ (-want +got):\n%s", diff)
	}
	if len(res.Federated) != 2 {
		t.Fatalf("got %d federated objects; want 2", len(res.Federated))
	}
	wantSpec := map[string]any{
		"defaultBackend": map[string]any{"service": map[string]any{"name": "default", "port": map[string]any{"name": "http"}}},
		"rules": []any{map[string]any{"http": map[string]any{"paths": []any{
			map[string]any{"path": "/", "pathType": "ImplementationSpecific", "backend": map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": int64(80)}}}},
			map[string]any{"path": "/x", "pathType": "Prefix", "backend": map[string]any{"weight": int64(3), "service": map[string]any{"name": "x", "port": map[string]any{"number": int64(81)}}}},
		}}}},
	}
	if diff := cmp.Diff(wantSpec, res.Federated[1].Spec.Template.Object["spec"]); diff != "" {
		t.Errorf("converted Ingress spec differs (-want +got):\n%s", diff)
	}
}
