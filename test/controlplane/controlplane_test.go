// Package controlplane_test runs the whole control plane against real kube-apiservers started by
// internal/testenv: a host with fedkit's CRDs (all but FederatedJob's, and none of the DNS
// ones) and two members registered on it as Clusters and Secrets, reached through
// federation/kube.
package controlplane_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/conformance"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/testenv"
)

const hostName = "host"

var memberNames = []string{"m1", "m2"}

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, append([]string{hostName}, memberNames...)...))
}

var (
	deployments    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespaces     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	events         = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	fedDeployments = federation.DeploymentType.FederatedGVR()
)

// web is the FederatedDeployment ns/web; each run of the test has its own namespace, so
// -count=N starts from nothing on the shared servers.
const web = `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: %s}
spec:
  template:
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: "nginx:1.27"}]}
  placement: {clusters: [{name: m1}, {name: m2}]}
`

// The control plane over a real host and two members: the monitor marks the clusters Ready
// from their /readyz, the scheduler places, sync propagates, the collector reports Ready once
// the members' Deployments report ready replicas (no controller-manager runs here: the test
// writes their status as the Deployment controller would), and sync's events reach the host (a change's: a new object's first rollout writes none).
// The types whose CRDs the host lacks are reported, and everything else runs.
func TestControlPlaneOnRealServers(t *testing.T) {
	ns := fmt.Sprintf("shop-%d", runs.Add(1))
	env, members := setup(t, ns)
	controlPlaneScenario(t, env, members, ns, env.Config(hostName))
}

// controlPlaneScenario is TestControlPlaneOnRealServers in namespace ns, with the control
// plane reaching the host through cpConfig (the test itself reads and writes as the admin).
func controlPlaneScenario(t *testing.T, env *testenv.Env, members map[string]*kube.Client, ns string, cpConfig *rest.Config) {
	t.Helper()
	ctx := context.Background()
	host := env.Client(t, hostName)
	cpHost, set, err := kube.Connect(cpConfig, kube.ClusterSetOptions{})
	require.NoError(t, err)

	opts := controlplane.Options{Registerer: prometheus.NewRegistry()}
	cp, err := controlplane.New(cpHost, set, opts)
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cp.Run(rctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	fedtest.Eventually(t, "both clusters Ready (the monitor's probes)", func() bool {
		return testenv.ClusterReady(t, host, "m1") && testenv.ClusterReady(t, host, "m2")
	})
	fedtest.Create(t, host, fedDeployments, fmt.Sprintf(web, ns))
	for _, m := range memberNames {
		fedtest.Eventually(t, m+": the Deployment created", func() bool {
			_, err := members[m].Get(ctx, deployments, ns, "web")
			return err == nil
		})
	}
	fedtest.Eventually(t, "Ready False: no member reports ready replicas yet", func() bool { return condition(t, host, ns, "Ready") == "False" })

	for _, m := range memberNames {
		reportReady(t, members[m], ns)
	}
	fedtest.Eventually(t, "Scheduled, Propagated and Ready", func() bool {
		return condition(t, host, ns, "Scheduled") == "True" && condition(t, host, ns, "Propagated") == "True" && condition(t, host, ns, "Ready") == "True"
	})

	// The first rollout's Normal events are not written (the conditions say the same); a
	// change is an event, written at the end of the control plane's event window.
	_, err = host.Patch(ctx, fedDeployments, ns, "web", types.MergePatchType, []byte(`{"spec":{"template":{"metadata":{"labels":{"tier":"front"}}}}}`))
	require.NoError(t, err)
	fedtest.Eventually(t, "an UpdatedInCluster event on the host", func() bool {
		l, err := host.List(ctx, events, ns, metav1.ListOptions{})
		require.NoError(t, err)
		for _, u := range l.Items {
			var ev corev1.Event
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ev))
			if ev.Reason == "UpdatedInCluster" && ev.InvolvedObject.Name == "web" && ev.InvolvedObject.Kind == "FederatedDeployment" {
				return true
			}
		}
		return false
	})

	for _, l := range cp.Status() {
		switch {
		case l.Name == controlplane.DNSLoop || slices.Contains([]string{"scheduler/FederatedJob", "sync/FederatedJob", "status/FederatedJob", "propagation/FederatedJob"}, l.Name):
			require.Equal(t, controlplane.StateFailed, l.State, l.Name)
			require.ErrorIs(t, l.Err, controlplane.ErrNotServed, l.Name)
		// The dependencies loop runs over the workload types the host serves, and says it
		// runs without FederatedJob.
		case l.Name == controlplane.DependenciesLoop:
			require.Equal(t, controlplane.StateRunning, l.State, "%s: %v", l.Name, l.Err)
			require.ErrorIs(t, l.Partial, controlplane.ErrNotServed, l.Name)
			require.ErrorContains(t, l.Partial, "federatedjobs.types.federation.k8s.io", l.Name)
		default:
			require.Equal(t, controlplane.StateRunning, l.State, "%s: %v", l.Name, l.Err)
		}
	}
}

// setup returns the shared servers with fedkit's CRDs installed on the host (all but
// FederatedJob's, and none of the DNS ones), the members registered as Clusters with their
// Secrets, and the namespaces ns, and clients of the members. Every test calls it, in any
// order, on the same servers: creating what exists already is not an error.
func setup(t *testing.T, ns ...string) (*testenv.Env, map[string]*kube.Client) {
	t.Helper()
	env := testenv.Shared(t)
	host := env.Client(t, hostName)
	withoutJobs := slices.DeleteFunc(federation.BuiltinTypes(), func(t federation.TypeConfig) bool { return t.Federated.Kind == "FederatedJob" })
	crds, err := federation.CRDs(withoutJobs...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, conformance.InstallCRDs(ctx, host, crds...))

	for _, name := range append([]string{"fedkit-system"}, ns...) {
		fedtest.Create(t, host, namespaces, fmt.Sprintf(`{apiVersion: v1, kind: Namespace, metadata: {name: %s}}`, name))
	}
	members := map[string]*kube.Client{}
	for _, name := range memberNames {
		members[name] = env.Client(t, name)
		env.Register(t, host, name, name, "fedkit-system")
	}
	return env, members
}

// reportReady writes the status of the member Deployment ns/web as the Deployment controller
// would once its replicas run.
func reportReady(t *testing.T, member *kube.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	u, err := member.Get(ctx, deployments, ns, "web")
	require.NoError(t, err)
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	u.Object["status"] = map[string]any{
		"observedGeneration": u.GetGeneration(),
		"replicas":           n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n,
	}
	_, err = member.UpdateStatus(ctx, deployments, u)
	require.NoError(t, err)
}

// condition returns the status of the condition typ of ns/web, "" when it has none.
func condition(t *testing.T, host *kube.Client, ns, typ string) string {
	t.Helper()
	u, err := host.Get(context.Background(), fedDeployments, ns, "web")
	require.NoError(t, err)
	obj, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	for _, c := range obj.Status.Conditions {
		if c.Type == typ {
			return string(c.Status)
		}
	}
	return ""
}

// rbacResources maps the kinds of config/rbac to their resources.
var rbacResources = map[string]schema.GroupVersionResource{
	"Namespace":                        {Version: "v1", Resource: "namespaces"},
	"ServiceAccount":                   {Version: "v1", Resource: "serviceaccounts"},
	"ClusterRole":                      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"Role":                             {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"ClusterRoleBinding":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"RoleBinding":                      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"ValidatingAdmissionPolicy":        {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	"ValidatingAdmissionPolicyBinding": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
}

// applyRBAC creates every object of config/rbac on the host (those that exist already, from
// an earlier run on the shared servers, are left as they are).
func applyRBAC(t *testing.T, host *kube.Client) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "rbac", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	createAll(t, host, files...)
}

// createAll creates every object of the YAML files (but kustomization.yaml) through c; those
// that exist already are left as they are.
func createAll(t *testing.T, c *kube.Client, files ...string) {
	t.Helper()
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, f)
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal(doc, &u.Object), f)
			if len(u.Object) == 0 {
				continue // only comments
			}
			gvr, ok := rbacResources[u.GetKind()]
			require.True(t, ok, "%s: no resource known for kind %s", f, u.GetKind())
			if _, err := c.Create(context.Background(), gvr, u); !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err, "%s: %s %s", f, u.GetKind(), u.GetName())
			}
		}
	}
}

// memberCredentials makes each member's Secret on the host hold a token of the member
// ServiceAccount of config/rbac/member (member.yaml and secrets.yaml applied in the member),
// instead of the member's admin token, for the rest of the test: the control plane then has
// in the members exactly what those roles grant.
func memberCredentials(t *testing.T, env *testenv.Env, host *kube.Client) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join("..", "..", "config", "rbac", "member")
	for _, name := range memberNames {
		createAll(t, env.Client(t, name), filepath.Join(dir, "member.yaml"), filepath.Join(dir, "secrets.yaml"))
		cs, err := kubernetes.NewForConfig(env.Config(name))
		require.NoError(t, err)
		tok, err := cs.CoreV1().ServiceAccounts("fedkit-system").CreateToken(ctx, "fedkit-member",
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
		require.NoError(t, err)
		setToken := func(token string) error {
			u, err := host.Get(ctx, federation.SecretGVR, "fedkit-system", name)
			if err != nil {
				return err
			}
			u.Object["data"] = map[string]any{kube.TokenKey: base64.StdEncoding.EncodeToString([]byte(token))}
			_, err = host.Update(ctx, federation.SecretGVR, u)
			return err
		}
		require.NoError(t, setToken(tok.Status.Token))
		t.Cleanup(func() { require.NoError(t, setToken(env.Config(name).BearerToken)) })
	}
}

// TestControlPlaneAsItsServiceAccount runs the scenarios of TestControlPlaneOnRealServers,
// TestPropagationPolicyOnRealServers and TestDependenciesOnRealServers with the control plane
// authenticated as the ServiceAccount fedkit-system/fedkit-controlplane, which holds only
// what config/rbac grants it (the host authorizes with RBAC; the admin token of the other
// tests is in system:masters), and with the members' credentials those of config/rbac/member.
// Before it, the account is shown to be held to those roles: it reads no Secret outside
// fedkit-system, may not update the user's Deployments (only patch them), and the admission
// policy lets it change a Cluster's taints but not its apiEndpoint or secretRef.
func TestControlPlaneAsItsServiceAccount(t *testing.T) {
	ns := fmt.Sprintf("shop-%d", runs.Add(1))
	policyNS, depsNS := fmt.Sprintf("policy-%d", runs.Add(1)), fmt.Sprintf("deps-%d", runs.Add(1))
	env, members := setup(t, ns, policyNS, depsNS)
	ctx := context.Background()
	admin := env.Client(t, hostName)
	applyRBAC(t, admin)
	memberCredentials(t, env, admin)

	cs, err := kubernetes.NewForConfig(env.Config(hostName))
	require.NoError(t, err)
	tok, err := cs.CoreV1().ServiceAccounts("fedkit-system").CreateToken(ctx, "fedkit-controlplane",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg := env.Config(hostName)
	cfg.BearerToken = tok.Status.Token
	sa, err := kube.New(cfg, kube.Options{})
	require.NoError(t, err)

	_, err = sa.List(ctx, federation.SecretGVR, "default", metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "listing Secrets in default as the control plane: %v", err)
	fedtest.Create(t, admin, deployments, fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: mine, namespace: %s},
spec: {selector: {matchLabels: {app: mine}}, template: {metadata: {labels: {app: mine}}, spec: {containers: [{name: c, image: "c:1"}]}}}}`, ns))
	mine, err := admin.Get(ctx, deployments, ns, "mine")
	require.NoError(t, err)
	_, err = sa.Update(ctx, deployments, mine)
	require.True(t, apierrors.IsForbidden(err), "updating the user's Deployment as the control plane: %v", err)

	// The policy reaches the apiserver's admission a moment after it is created: wait until
	// a change of spec.apiEndpoint is refused, trying it as a dry run (admission runs, nothing
	// is stored), then try it for real.
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	redirected := func() *unstructured.Unstructured {
		u, err := admin.Get(ctx, federation.ClusterGVR, "", "m1")
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(u.Object, "https://attacker.example.com", "spec", "apiEndpoint"))
		return u
	}
	require.Eventually(t, func() bool {
		_, err := dyn.Resource(federation.ClusterGVR).Update(ctx, redirected(), metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil
	}, 30*time.Second, 100*time.Millisecond, "the admission policy never refused a change of spec.apiEndpoint")
	_, err = sa.Update(ctx, federation.ClusterGVR, redirected())
	require.ErrorContains(t, err, "may not change spec.apiEndpoint")
	u, err := admin.Get(ctx, federation.ClusterGVR, "", "m1")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, "other", "spec", "secretRef", "name"))
	_, err = sa.Update(ctx, federation.ClusterGVR, u)
	require.ErrorContains(t, err, "may not change spec.secretRef")

	// Its taints it may write (the monitor's write path), and take away again.
	u, err = admin.Get(ctx, federation.ClusterGVR, "", "m1")
	require.NoError(t, err)
	taint, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.Taint{Key: "test.fedkit.io/rbac", Effect: corev1.TaintEffectNoSchedule})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{taint}, "spec", "taints"))
	u, err = sa.Update(ctx, federation.ClusterGVR, u)
	require.NoError(t, err, "the control plane's account writing spec.taints")
	unstructured.RemoveNestedField(u.Object, "spec", "taints")
	_, err = sa.Update(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)

	controlPlaneScenario(t, env, members, ns, cfg)
	propagationScenario(t, env, members, policyNS, cfg)
	dependenciesScenario(t, env, members, depsNS, cfg)
}

func ptr[T any](v T) *T { return &v }

// A plain Deployment and a ClusterPropagationPolicy on a real host: the control plane's
// propagation loop generates the FederatedDeployment, the members get the Deployment, the
// host Deployment's status shows the fleet's ready replicas once the members report them
// (the test writes their status as the Deployment controller would), and deleting the
// Deployment deletes the generated object and the member copies.
func TestPropagationPolicyOnRealServers(t *testing.T) {
	ns := fmt.Sprintf("policy-%d", runs.Add(1))
	env, members := setup(t, ns)
	propagationScenario(t, env, members, ns, env.Config(hostName))
}

// propagationScenario is TestPropagationPolicyOnRealServers in namespace ns, with the control
// plane reaching the host through cpConfig.
func propagationScenario(t *testing.T, env *testenv.Env, members map[string]*kube.Client, ns string, cpConfig *rest.Config) {
	t.Helper()
	ctx := context.Background()
	host, err := kube.New(env.Config(hostName), kube.Options{})
	require.NoError(t, err)
	cpHost, set, err := kube.Connect(cpConfig, kube.ClusterSetOptions{})
	require.NoError(t, err)
	cp, err := controlplane.New(cpHost, set, controlplane.Options{
		Types: []federation.TypeConfig{federation.DeploymentType}, Registerer: prometheus.NewRegistry(),
		Disable: controlplane.Parts{DNS: true},
	})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cp.Run(rctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	fedtest.Create(t, host, federation.ClusterPropagationPolicyGVR, fmt.Sprintf(`
apiVersion: core.federation.k8s.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %s, name: api}]
  placement: {clusters: [{name: m1}, {name: m2}]}`, ns, ns))
	defer func() {
		_ = host.Delete(ctx, federation.ClusterPropagationPolicyGVR, "", ns, metav1.DeleteOptions{})
	}()
	fedtest.Create(t, host, deployments, fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: %s, labels: {app: api}}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "api:1"}]}`, ns))

	for _, m := range memberNames {
		fedtest.Eventually(t, m+": the Deployment created", func() bool {
			_, err := members[m].Get(ctx, deployments, ns, "api")
			return err == nil
		})
	}
	fed, err := host.Get(ctx, fedDeployments, ns, "api")
	require.NoError(t, err)
	require.Equal(t, federation.GeneratedByPropagation, fed.GetLabels()[federation.GeneratedByLabel])
	require.Equal(t, "cluster/"+ns, fed.GetAnnotations()[federation.PolicyAnnotation])

	for _, m := range memberNames {
		u, err := members[m].Get(ctx, deployments, ns, "api")
		require.NoError(t, err)
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		u.Object["status"] = map[string]any{
			"observedGeneration": u.GetGeneration(),
			"replicas":           n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n,
		}
		_, err = members[m].UpdateStatus(ctx, deployments, u)
		require.NoError(t, err)
	}
	fedtest.Eventually(t, "the host Deployment's status shows the fleet's 4 ready replicas", func() bool {
		u, err := host.Get(ctx, deployments, ns, "api")
		require.NoError(t, err)
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return ready == 4 && observed == u.GetGeneration()
	})

	require.NoError(t, host.Delete(ctx, deployments, ns, "api", metav1.DeleteOptions{}))
	fedtest.Eventually(t, "the generated object and the member copies deleted", func() bool {
		_, err := host.Get(ctx, fedDeployments, ns, "api")
		if !apierrors.IsNotFound(err) {
			return false
		}
		for _, m := range memberNames {
			if _, err := members[m].Get(ctx, deployments, ns, "api"); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
}
