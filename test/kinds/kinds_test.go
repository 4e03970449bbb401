package kinds_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

const rules = `
ready: "has(self.status) && has(self.status.phase) && self.status.phase == 'Running'"
message: "has(self.status) && has(self.status.phase) ? 'phase ' + self.status.phase : 'no phase reported'"
readyReplicas: "has(self.status) && has(self.status.readyReplicas) ? self.status.readyReplicas : 0"
status: {phase: "has(self.status) && has(self.status.phase) ? self.status.phase : 'Pending'"}
`

// env is the shared servers: the host with fedkit's CRDs, the Widget CRD in all three, the
// members registered on the host, and a kubeconfig with a context per server.
type env struct {
	*testenv.Env
	host       *kube.Client
	members    map[string]*kube.Client
	kubeconfig string
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{Env: testenv.Shared(t), members: map[string]*kube.Client{}}
	e.host = e.Client(t, hostName)
	crds, err := federation.CRDs(federation.BuiltinTypes()...)
	require.NoError(t, err)
	require.NoError(t, conformance.InstallCRDs(ctx, e.host, crds...))
	widget := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, sigsyaml.UnmarshalStrict([]byte(fedtest.WidgetCRD), widget))
	for _, c := range []string{hostName, member1, member2} {
		cl := e.Client(t, c)
		require.NoError(t, conformance.InstallCRDs(ctx, cl, widget))
		fedtest.Create(t, cl, federation.NamespaceType.TargetGVR(), `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
		if c != hostName {
			e.members[c] = cl
		}
	}
	fedtest.Create(t, e.host, federation.NamespaceType.TargetGVR(), `{apiVersion: v1, kind: Namespace, metadata: {name: fedkit-system}}`)
	for _, m := range []string{member1, member2} {
		e.Register(t, e.host, m, m, kube.DefaultNamespace)
	}
	kc, err := e.Kubeconfig()
	require.NoError(t, err)
	e.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(e.kubeconfig, kc, 0o600))
	return e
}

// kubectlFed runs the plugin built from this checkout on the host's context and returns
// its output; it fails the test unless it exits 0.
func (e *env) kubectlFed(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(managertest.Plugin(t), append([]string{"--kubeconfig", e.kubeconfig, "--context", hostName}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = []string{"HOME=" + t.TempDir()}
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl fed %q: %v\n%s%s", args, err, out.String(), errOut.String())
	}
	return out.String()
}

// TestEnableAWidgetFromTheCommandLine: a control plane that reads type configurations runs;
// `kubectl fed enable widgets.example.com --rules` writes the FederatedWidget CRD (the
// Widget's schema under spec.template: the host's API server refuses a template the members
// would refuse) and the configuration, and the control plane starts the type's loops without
// a restart. A FederatedWidget with an override in member2 propagates to both members; the
// health rule keeps it not Ready until each member reports its phase Running, then the
// status aggregates the members' ready replicas, and `kubectl fed get` shows each member's
// copy with its own status.
func TestEnableAWidgetFromTheCommandLine(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	set, err := kube.NewClusterSet(e.host, kube.ClusterSetOptions{Namespace: kube.DefaultNamespace})
	require.NoError(t, err)
	o := controlplane.Options{Types: []federation.TypeConfig{}, TypeConfigs: true, RetryPeriod: 2 * time.Second, Logger: testr.New(t)}
	o.Disable.DNS, o.Disable.Propagation, o.Disable.Dependencies = true, true, true
	o.Monitor.Period = 2 * time.Second
	o.Status.Period = 2 * time.Second
	cp, err := controlplane.New(e.host, set, o)
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cp.Run(runCtx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(rules), 0o600))
	out := e.kubectlFed(t, "enable", "widgets.example.com", "--rules", path)
	require.Contains(t, out, "federatedtypeconfigs.core.federation.k8s.io/widgets.example.com created")
	require.Contains(t, out, "resources: [federatedwidgets/status]", "the RBAC printed")

	typ := fedtest.WidgetType
	fedtest.Eventually(t, "the FederatedWidget CRD is served", func() bool {
		_, err := e.host.List(ctx, typ.FederatedGVR(), "shop", metav1.ListOptions{Limit: 1})
		return err == nil
	})
	// The host validates templates with the Widget's own schema and rules.
	for _, bad := range []struct{ spec, want string }{
		{`{color: purple}`, "Unsupported value"},
		{`{color: red, size: large}`, "large widgets are not red"},
		{`{replicas: -1, color: blue}`, "should be greater than or equal to 0"},
	} {
		_, err := e.host.Create(ctx, typ.FederatedGVR(), fedtest.Decode(t, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedWidget,
  metadata: {name: bad, namespace: shop}, spec: {template: {spec: `+bad.spec+`}, placement: {clusterSelector: {}}}}`))
		require.True(t, apierrors.IsInvalid(err), "template %s: %v; want Invalid", bad.spec, err)
		require.Contains(t, err.Error(), bad.want)
	}

	fedtest.Create(t, e.host, typ.FederatedGVR(), `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedWidget
metadata: {name: blue, namespace: shop}
spec:
  template: {metadata: {labels: {app: blue}}, spec: {replicas: 2, color: blue}}
  placement: {clusterSelector: {}}
  overrides: [{clusterName: member2, clusterOverrides: [{op: add, path: /spec/size, value: large}]}]
`)
	member := func(m string) *unstructured.Unstructured {
		u, err := e.members[m].Get(ctx, typ.TargetGVR(), "shop", "blue")
		if err != nil {
			return nil
		}
		return u
	}
	fedtest.Eventually(t, "the widget in both members", func() bool { return member(member1) != nil && member(member2) != nil })
	size, _, _ := unstructured.NestedString(member(member2).Object, "spec", "size")
	require.Equal(t, "large", size, "member2's override")
	_, has, _ := unstructured.NestedString(member(member1).Object, "spec", "size")
	require.False(t, has, "member1 has no override")

	readyCond := func() *metav1.Condition {
		u, err := e.host.Get(ctx, typ.FederatedGVR(), "shop", "blue")
		require.NoError(t, err)
		f, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		return meta.FindStatusCondition(f.Status.Conditions, federation.ConditionReady)
	}
	fedtest.Eventually(t, "not Ready by the health rule: no phase reported", func() bool {
		c := readyCond()
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "no phase reported")
	})
	for _, m := range []string{member1, member2} {
		u := member(m)
		u.Object["status"] = map[string]any{"phase": "Running", "readyReplicas": int64(2)}
		_, err := e.members[m].UpdateStatus(ctx, typ.TargetGVR(), u)
		require.NoError(t, err)
	}
	var agg *federation.AggregatedStatus
	fedtest.Eventually(t, "Ready, with the members' ready replicas aggregated", func() bool {
		c := readyCond()
		u, err := e.host.Get(ctx, typ.FederatedGVR(), "shop", "blue")
		require.NoError(t, err)
		f, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		agg = f.Status.Aggregated
		return c != nil && c.Status == metav1.ConditionTrue && agg != nil && agg.ReadyReplicas == 4
	})
	require.EqualValues(t, 4, agg.Replicas, "the members' desired counts, read at spec.replicas")

	got := e.kubectlFed(t, "get", "federatedwidget/blue", "-n", "shop")
	t.Logf("kubectl fed get federatedwidget/blue:\n%s", got)
	for _, m := range []string{member1, member2} {
		row := lineOf(got, m+" ")
		require.NotEmpty(t, row, "no row for %s:\n%s", m, got)
		for _, want := range []string{"OK", "2/2", "True"} {
			require.Contains(t, row, want, "%s's row", m)
		}
	}
}

// TestEnableABuiltinKindMakesAStructuralCRD: the CRD `kubectl fed enable deployments.apps`
// makes from the real API server's OpenAPI v3 is one that server accepts (a server-side dry
// run of its creation), under another federated kind so the built-in FederatedDeployment
// stays.
func TestEnableABuiltinKindMakesAStructuralCRD(t *testing.T) {
	e := setup(t)
	out := e.kubectlFed(t, "enable", "deployments.apps", "--federated-kind", "FederatedAppsDeployment", "--dry-run")
	d := yaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	var crd *unstructured.Unstructured
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			break
		}
		if u := (&unstructured.Unstructured{Object: m}); u.GetKind() == "CustomResourceDefinition" {
			crd = u
		}
	}
	require.NotNil(t, crd, "no CRD in the output:\n%s", out)
	_, err := e.host.Dynamic().Resource(conformance.CRDGVR).Create(context.Background(), crd, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err, "the real API server refuses the CRD enable made of deployments.apps")
}

func lineOf(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
