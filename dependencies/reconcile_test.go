package dependencies_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// workloadWith creates FederatedDeployment ns/name whose pod spec is podSpec (YAML, indented
// for spec.template.spec.template.spec), scheduled to clusters.
func workloadWith(t testing.TB, host *fake.Cluster, name, podSpec string, clusters ...string) {
	t.Helper()
	gvr := federation.DeploymentType.FederatedGVR()
	fedtest.Create(t, host, gvr, `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: `+name+`, namespace: ns}
spec:
  propagateDependencies: true
  template:
    spec:
      template:
        spec:
`+podSpec)
	u, err := host.Get(context.Background(), gvr, "ns", name)
	require.NoError(t, err)
	var sc []any
	for _, c := range clusters {
		sc = append(sc, map[string]any{"name": c, "replicas": int64(1)})
	}
	u.Object["status"] = map[string]any{"schedule": map[string]any{"clusters": sc}}
	_, err = host.UpdateStatus(context.Background(), gvr, u)
	require.NoError(t, err)
}

func resolved(t *testing.T, host *fake.Cluster, name string) (string, string, string) {
	t.Helper()
	u, err := host.Get(context.Background(), federation.DeploymentType.FederatedGVR(), "ns", name)
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	c := meta.FindStatusCondition(obj.Status.Conditions, federation.ConditionDependenciesResolved)
	if c == nil {
		return "", "", ""
	}
	return string(c.Status), c.Reason, c.Message
}

// TestReconcileGeneratesFederatedDependency: one pass federates the host ConfigMap with its
// content (server metadata stripped) to the workload's clusters, owned by the loop, tolerating
// every taint: it follows its workload wherever that runs.
func TestReconcileGeneratesFederatedDependency(t *testing.T) {
	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"ns"}})
	fedtest.Create(t, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: ns, labels: {app: web},
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}", team: shop}}, data: {level: info}}`)
	workloadWith(t, e.Host, "web", `          containers: [{name: c, envFrom: [{configMapRef: {name: cfg}}]}]`, "b", "a")
	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock})
	require.NoError(t, err)
	_, err = d.Reconcile(context.Background(), federation.Key{Namespace: "ns"})
	require.NoError(t, err)

	u, err := e.Host.Get(context.Background(), federation.ConfigMapType.FederatedGVR(), "ns", "cfg")
	require.NoError(t, err)
	require.Equal(t, federation.GeneratedByDependencies, u.GetLabels()[federation.GeneratedByLabel])
	want := map[string]any{
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"team": "shop"}},
			"data":     map[string]any{"level": "info"},
		},
		"placement": map[string]any{
			"clusters":    []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}},
			"tolerations": []any{map[string]any{"operator": "Exists"}},
		},
	}
	if diff := cmp.Diff(want, u.Object["spec"]); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	status, reason, _ := resolved(t, e.Host, "web")
	require.Equal(t, "True", status)
	require.Equal(t, dependencies.ReasonResolved, reason)
}

// TestReconcileBadAndOptional: a pod template that does not decode is a condition naming the
// object and field, not a crash nor a failed pass for the others; a missing optional Secret
// is no error and nothing is federated for it; a missing required one names it.
func TestReconcileBadAndOptional(t *testing.T) {
	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"ns"}})
	workloadWith(t, e.Host, "bad", `          volumes: 3`, "a")
	workloadWith(t, e.Host, "opt", `          containers: [{name: c, envFrom: [{secretRef: {name: maybe, optional: true}}]}]`, "a")
	workloadWith(t, e.Host, "req", `          imagePullSecrets: [{name: pull}]
          containers: [{name: c}]`, "a")
	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock})
	require.NoError(t, err)
	_, err = d.Reconcile(context.Background(), federation.Key{Namespace: "ns"})
	require.NoError(t, err)

	status, reason, msg := resolved(t, e.Host, "bad")
	require.Equal(t, []string{"False", dependencies.ReasonInvalidTemplate}, []string{status, reason})
	require.Contains(t, msg, "FederatedDeployment ns/bad: spec.template.spec.template.spec")
	status, reason, _ = resolved(t, e.Host, "opt")
	require.Equal(t, []string{"True", dependencies.ReasonResolved}, []string{status, reason})
	status, reason, msg = resolved(t, e.Host, "req")
	require.Equal(t, []string{"False", dependencies.ReasonDependencyMissing}, []string{status, reason})
	require.True(t, strings.Contains(msg, "Secret/pull"), msg)
	for _, name := range []string{"maybe", "pull"} {
		_, err := e.Host.Get(context.Background(), federation.SecretType.FederatedGVR(), "ns", name)
		require.True(t, apierrors.IsNotFound(err), "FederatedSecret %s: %v", name, err)
	}
}

// TestReconcileDeletingWorkloadNeverWidens: a workload being deleted on the host keeps its
// dependency in the clusters the dependency is in (its member copies still run there until
// sync removes them), but never puts it anywhere new: a pass that reads it while it goes
// (from a cache, or after another pass narrowed the dependency) must not undo the narrowing,
// nor federate a dependency nobody else needs.
func TestReconcileDeletingWorkloadNeverWidens(t *testing.T) {
	ctx := context.Background()
	fedCM := federation.ConfigMapType.FederatedGVR()
	generatedIn := func(name string, clusters ...string) string {
		refs := make([]string, len(clusters))
		for i, c := range clusters {
			refs[i] = "{name: " + c + "}"
		}
		return `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: ` + name + `, namespace: ns,
  labels: {` + federation.GeneratedByLabel + `: ` + federation.GeneratedByDependencies + `}},
  spec: {template: {data: {level: info}}, placement: {clusters: [` + strings.Join(refs, ", ") + `]}}}`
	}
	placed := func(t *testing.T, host *fake.Cluster, name string) []string {
		t.Helper()
		u, err := host.Get(ctx, fedCM, "ns", name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		require.NoError(t, err)
		obj, err := federation.FederatedObjectFromUnstructured(u)
		require.NoError(t, err)
		var out []string
		for _, c := range obj.Spec.Placement.Clusters {
			out = append(out, c.Name)
		}
		return out
	}
	// deleting makes the workload name go: a finalizer holds it, deletionTimestamp set.
	deleting := func(t *testing.T, host *fake.Cluster, name string) {
		t.Helper()
		gvr := federation.DeploymentType.FederatedGVR()
		u, err := host.Get(ctx, gvr, "ns", name)
		require.NoError(t, err)
		u.SetFinalizers([]string{"test.fedkit.io/hold"})
		_, err = host.Update(ctx, gvr, u)
		require.NoError(t, err)
		require.NoError(t, host.Delete(ctx, gvr, "ns", name, metav1.DeleteOptions{}))
	}
	uses := func(cm string) string {
		return `          containers: [{name: c, envFrom: [{configMapRef: {name: ` + cm + `}}]}]`
	}

	e := fedtest.New(t, fedtest.Options{Namespaces: []string{"ns"}})
	for _, name := range []string{"narrowed", "wide", "alone", "byhand"} {
		fedtest.Create(t, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: `+name+`, namespace: ns}, data: {level: info}}`)
	}
	// narrowed: already narrowed to web's us while api (eu) goes.
	fedtest.Create(t, e.Host, fedCM, generatedIn("narrowed", "us"))
	// wide: still in eu and us while api goes: it stays in both until api is gone.
	fedtest.Create(t, e.Host, fedCM, generatedIn("wide", "eu", "us"))
	// alone: only the going workload refers to it, and it is not federated.
	// byhand: the user's FederatedConfigMap; the annotation already says us only.
	fedtest.Create(t, e.Host, fedCM, `{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedConfigMap, metadata: {name: byhand, namespace: ns,
  annotations: {`+federation.RequiredByClustersAnnotation+`: us}}, spec: {template: {data: {level: info}}, placement: {clusters: [{name: us}]}}}`)
	workloadWith(t, e.Host, "web", `          containers: [{name: c, envFrom: [{configMapRef: {name: narrowed}}, {configMapRef: {name: wide}}, {configMapRef: {name: byhand}}]}]`, "us")
	workloadWith(t, e.Host, "api", `          containers: [{name: c, envFrom: [{configMapRef: {name: narrowed}}, {configMapRef: {name: wide}}, {configMapRef: {name: byhand}}]}]`, "eu")
	workloadWith(t, e.Host, "job", uses("alone"), "eu")
	deleting(t, e.Host, "api")
	deleting(t, e.Host, "job")

	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock})
	require.NoError(t, err)
	_, err = d.Reconcile(ctx, federation.Key{Namespace: "ns"})
	require.NoError(t, err)

	got := map[string][]string{}
	for _, name := range []string{"narrowed", "wide", "alone"} {
		got[name] = placed(t, e.Host, name)
	}
	u, err := e.Host.Get(ctx, fedCM, "ns", "byhand")
	require.NoError(t, err)
	got["byhand (annotation)"] = federation.RequiredClusters(u.GetAnnotations())
	want := map[string][]string{"narrowed": {"us"}, "wide": {"eu", "us"}, "alone": nil, "byhand (annotation)": {"us"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}
}
