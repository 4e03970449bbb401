package controlplane_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
)

// rbacResources maps the kinds of config/rbac to their resources.
var rbacResources = map[string]schema.GroupVersionResource{
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
			if _, err := host.Create(context.Background(), gvr, u); !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err, "%s: %s %s", f, u.GetKind(), u.GetName())
			}
		}
	}
}

// TestControlPlaneAsItsServiceAccount runs TestControlPlaneOnRealServers' scenario with the
// control plane authenticated as the ServiceAccount fedkit-system/fedkit-controlplane, which
// holds only what config/rbac grants it (the host authorizes with RBAC; the admin token of
// the other tests is in system:masters). Before it, the account is shown to be held to those
// roles: it reads no Secret outside fedkit-system, and the admission policy lets it change a
// Cluster's taints but not its apiEndpoint or secretRef.
func TestControlPlaneAsItsServiceAccount(t *testing.T) {
	ns := fmt.Sprintf("shop-%d", runs.Add(1))
	env, members := setup(t, ns)
	ctx := context.Background()
	admin := env.Client(t, hostName)
	applyRBAC(t, admin)

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
}

func ptr[T any](v T) *T { return &v }
