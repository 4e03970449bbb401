package dependencies_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/dependencies"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func gvk(group, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
}

func decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
	return m
}

func refs(kv ...string) []dependencies.Reference {
	var out []dependencies.Reference
	for i := 0; i+1 < len(kv); i += 2 {
		r := dependencies.Reference{Kind: kv[i], Name: strings.TrimSuffix(kv[i+1], "?")}
		r.Optional = strings.HasSuffix(kv[i+1], "?")
		out = append(out, r)
	}
	return out
}

// TestExtractors is the table of the built-in kinds: where each keeps its pod template, and
// what is and is not a dependency.
func TestExtractors(t *testing.T) {
	const pod = `
      serviceAccountName: sa
      containers:
      - name: c
        envFrom:
        - configMapRef: {name: cm}
      volumes:
      - name: s
        secret: {secretName: sec}`
	want := refs("ConfigMap", "cm", "Secret", "sec", "ServiceAccount", "sa")
	for _, tc := range []struct {
		name     string
		gvk      schema.GroupVersionKind
		template string
		want     []dependencies.Reference
	}{
		{"Deployment", gvk("apps", "Deployment"), "spec:\n  template:\n    spec:" + pod, want},
		{"DaemonSet", gvk("apps", "DaemonSet"), "spec:\n  template:\n    spec:" + pod, want},
		{"ReplicaSet", gvk("apps", "ReplicaSet"), "spec:\n  template:\n    spec:" + pod, want},
		{"Job", gvk("batch", "Job"), "spec:\n  template:\n    spec:" + pod, want},
		{"CronJob", gvk("batch", "CronJob"), "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:" + strings.ReplaceAll(pod, "\n", "\n    "), want},
		{"Pod", gvk("", "Pod"), "spec:" + strings.ReplaceAll(pod, "\n      ", "\n  "), want},
		{"StatefulSet: volumeClaimTemplates are not dependencies", gvk("apps", "StatefulSet"), `
spec:
  volumeClaimTemplates:
  - metadata: {name: data}
  template:
    spec:
      containers:
      - name: c
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: data}
      - name: shared
        persistentVolumeClaim: {claimName: shared}`, refs("PersistentVolumeClaim", "shared")},
		{"the default ServiceAccount is not a dependency", gvk("apps", "Deployment"), `
spec:
  template:
    spec:
      serviceAccountName: default
      containers: [{name: c}]`, nil},
		{"the deprecated serviceAccount field", gvk("apps", "Deployment"), `
spec:
  template:
    spec:
      serviceAccount: old
      containers: [{name: c}]`, refs("ServiceAccount", "old")},
		{"optional only when every reference is", gvk("apps", "Deployment"), `
spec:
  template:
    spec:
      containers:
      - name: c
        envFrom:
        - configMapRef: {name: both, optional: true}
        - configMapRef: {name: opt, optional: true}
      volumes:
      - name: v
        configMap: {name: both}`, refs("ConfigMap", "both", "ConfigMap", "opt?")},
		{"no pod template", gvk("apps", "Deployment"), `spec: {replicas: 2}`, nil},
		{"no spec", gvk("apps", "Deployment"), `metadata: {labels: {a: b}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extract, ok := dependencies.Builtin()[tc.gvk]
			require.True(t, ok, "no extractor for %s", tc.gvk)
			got, err := extract(decode(t, tc.template))
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("references (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExtractorErrors: a template that is not what its kind says is an error naming the
// field, never a panic or a silent empty answer.
func TestExtractorErrors(t *testing.T) {
	for _, tc := range []struct {
		name, template, want string
	}{
		{"template not an object", `spec: {template: [1]}`, "spec.template.spec.template: want an object"},
		{"pod spec not an object", `spec: {template: {spec: 3}}`, "spec.template.spec.template.spec: want an object"},
		{"volumes not a list", `spec: {template: {spec: {volumes: 3}}}`, "spec.template.spec.template.spec:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dependencies.Builtin()[gvk("apps", "Deployment")](decode(t, tc.template))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestExtractGolden: every way a pod refers to a ConfigMap, Secret, ServiceAccount or PVC,
// from testdata/deployment.yaml. Refresh with -update.
func TestExtractGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/deployment.yaml")
	require.NoError(t, err)
	got, err := dependencies.Builtin()[gvk("apps", "Deployment")](decode(t, string(data)))
	require.NoError(t, err)
	var b strings.Builder
	for _, r := range got {
		fmt.Fprintf(&b, "%s optional=%v\n", r, r.Optional)
	}
	const golden = "testdata/deployment.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run: go test ./dependencies -run TestExtractGolden -update")
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
}
