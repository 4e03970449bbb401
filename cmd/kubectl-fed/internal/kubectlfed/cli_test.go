package kubectlfed

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// run runs the plugin with args and returns its exit status and output.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, Options{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
		Clock:        clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)),
		PollInterval: 10 * time.Millisecond,
	})
	return code, out.String(), errOut.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/kubectl-fed/internal/kubectlfed -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestEveryCommandHasHelp: every command answers --help with its usage, a description and an
// example, and exits 0.
func TestEveryCommandHasHelp(t *testing.T) {
	root := NewCommand(Options{})
	cmds := root.Commands()
	if len(cmds) < 6 {
		t.Fatalf("got %d commands; want join, unjoin, status, rollback, preview, migrate and cobra's", len(cmds))
	}
	for _, c := range append(cmds, root) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			args := []string{"--help"}
			if c != root {
				args = []string{c.Name(), "--help"}
			}
			code, out, errOut := run(t, "", args...)
			if code != 0 || errOut != "" {
				t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
			}
			if c.Long == "" || (c != root && c.Example == "") {
				t.Errorf("%s has no long description or no example", c.Name())
			}
			for _, want := range []string{c.Long, "Usage:", "--kubeconfig"} {
				if !strings.Contains(out, want) {
					t.Errorf("%v output lacks %q:\n%s", args, want, out)
				}
			}
		})
	}
}

func TestMigrateCommand(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "migrate", "testdata", "kubefed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, string(data), "migrate", "-f", "-", "--secret-namespace", "fed", "--allow-loss")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "migrate.stdout", out)
	golden(t, "migrate.stderr", errOut)
}

func TestPreviewCommand(t *testing.T) {
	const objects = `
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: a, labels: {region: eu}}
spec: {apiEndpoint: "https://a"}
status: {conditions: [{type: Ready, status: "True", reason: Ready, message: ok, lastTransitionTime: "2026-11-30T00:00:00Z"}]}
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: b}
spec: {apiEndpoint: "https://b"}
status: {conditions: [{type: Ready, status: "True", reason: Ready, message: ok, lastTransitionTime: "2026-11-30T00:00:00Z"}]}
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: settings, namespace: shop}
spec:
  template: {data: {color: blue}}
  placement: {clusterSelector: {matchLabels: {region: eu}}}
`
	const unused = `
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: nothing, namespace: shop}
spec: {targetKind: FederatedDeployment, totalReplicas: 3}
`
	const invalid = `
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: broken, namespace: shop}
spec:
  template: {data: {color: blue}}
  placement: {clusters: [{name: a}]}
  overrides: [{clusterName: a, clusterOverrides: [{op: bogus, path: /data/color}]}]
`
	// Plain objects and two policies: the Deployment's policy wins over the other by
	// priority and propagates its dependencies: the user's FederatedConfigMap, a host Secret,
	// an optional ConfigMap and a ServiceAccount the input does not have.
	const policies = `
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: frontend}
spec:
  priority: 10
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: shop, labelSelector: {matchLabels: {tier: web}}}]
  placement: {clusters: [{name: a}]}
  propagateDependencies: true
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: PropagationPolicy
metadata: {name: everything, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusters: [{name: b}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {tier: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers: [{name: web, image: "nginx:1.27", envFrom: [{secretRef: {name: web-token}}, {configMapRef: {name: tuning, optional: true}}]}]
      volumes: [{name: config, configMap: {name: settings}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {color: blue}
---
apiVersion: v1
kind: Secret
metadata: {name: web-token, namespace: shop}
data: {token: c2VjcmV0}
`
	// A kind without Go code, configured in the input: its replicas divided at its
	// replicasPath, its dependencies named by its rules.
	const widgets = `
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: FederatedTypeConfig
metadata: {name: widgets.example.com}
spec:
  targetType: {group: example.com, version: v1, kind: Widget, pluralName: widgets, scope: Namespaced}
  replicasPath: spec.replicas
  rules:
    ready: "has(self.status) && self.status.phase == 'Running'"
    dependencies: [{kind: ConfigMap, names: "[self.spec.configRef]"}]
---
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedWidget
metadata: {name: blue, namespace: shop}
spec:
  template: {spec: {replicas: 4, color: blue, configRef: settings}}
  placement: {clusters: [{name: a}, {name: b}]}
  propagateDependencies: true
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: blue, namespace: shop}
spec: {targetKind: FederatedWidget, totalReplicas: 4, clusters: {"*": {weight: 1}}}
`
	const badRules = `
---
apiVersion: core.federation.k8s.io/v1alpha1
kind: FederatedTypeConfig
metadata: {name: widgets.example.com}
spec:
  targetType: {group: example.com, version: v1, kind: Widget, pluralName: widgets, scope: Namespaced}
  rules: {ready: "self.status.phase =="}
`
	for _, tc := range []struct {
		name, in string
		args     []string
		code     int
	}{
		{"configured kind", objects + widgets, nil, 0},
		{"configured kind bad rules", objects + badRules, nil, 2},
		{"clean", objects, nil, 0},
		{"warning", objects + unused, nil, 0},
		{"warning strict", objects + unused, []string{"--strict"}, 1},
		{"error", objects + invalid, nil, 1},
		{"down", objects, []string{"--down", "a,b"}, 0},
		{"policy", objects + policies, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.in, append([]string{"preview", "-f", "-"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			golden(t, "preview-"+strings.ReplaceAll(tc.name, " ", "-")+".txt", out+"--- stderr\n"+errOut)
		})
	}
}

// statusObject is testdata/status-object.yaml.
func statusObject(t *testing.T) *federation.FederatedObject {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "status-object.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fed := &federation.FederatedObject{}
	if err := yaml.UnmarshalStrict(data, fed); err != nil {
		t.Fatal(err)
	}
	return fed
}

func TestStatusOutput(t *testing.T) {
	fed := statusObject(t)
	var out bytes.Buffer
	if err := printStatus(&out, fed, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "status.txt", out.String())
}

// TestStatusWarnsOfExpiringCredentials: status ends with a warning for each of the object's
// clusters whose credentials expire soon or have expired (the Cluster's CredentialsExpiring
// condition, which the cluster monitor writes), with the monitor's message.
func TestStatusWarnsOfExpiringCredentials(t *testing.T) {
	fed := statusObject(t)
	cluster := func(name, status, reason, msg string) federation.Cluster {
		c := federation.Cluster{}
		c.Name = name
		c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionCredentialsExpiring, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}}
		return c
	}
	clusters := []federation.Cluster{
		cluster("eu-1", "True", "CredentialsExpiring", "the credentials of the Cluster's Secret expire at 2026-12-03T00:00:00Z, in less than 168h: renew them (kubectl fed join the cluster again, or put a new token in its Secret)"),
		cluster("eu-2", "False", "CredentialsValid", "the credentials of the Cluster's Secret expire at 2027-12-01T00:00:00Z"),
		cluster("us-1", "True", "CredentialsExpired", "the credentials of the Cluster's Secret expired at 2026-11-30T00:00:00Z: renew them (kubectl fed join the cluster again, or put a new token in its Secret)"),
	}
	var out bytes.Buffer
	if err := printStatus(&out, fed, clusters); err != nil {
		t.Fatal(err)
	}
	golden(t, "status-credentials.txt", out.String())
}

func TestArgumentErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rollback", "widget/x"}, `kind "widget" is not a federated type`},
		{[]string{"status", "deployment/"}, `want KIND/NAME`},
		{[]string{"rollback", "x", "--context", "a", "--host-context", "b"}, `--context "a" and --host-context "b" disagree`},
		{[]string{"join"}, "accepts 1 arg(s)"},
		{[]string{"join", "Bad_Name", "--kubeconfig", "/nonexistent"}, `cluster name "Bad_Name"`},
		{[]string{"preview"}, `required flag(s) "filename" not set`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := run(t, "", append(tc.args, "-n", "ns")...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}
