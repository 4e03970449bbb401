package deploy_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/managertest"
	"github.com/fedkit/fedkit/internal/testenv"
)

// applyOrder is the order objects are applied in, as kubectl apply -k orders them: what
// others live in or refer to first.
var applyOrder = map[string]int{"Namespace": 0, "CustomResourceDefinition": 1, "ServiceAccount": 2, "ClusterRole": 3, "Role": 3,
	"ClusterRoleBinding": 4, "RoleBinding": 4, "ValidatingAdmissionPolicy": 5, "ValidatingAdmissionPolicyBinding": 6}

// apply creates every object on host (those that exist already, from an earlier run on the
// shared servers, are left as they are), resolving kinds through the host's discovery.
func apply(t *testing.T, host *kube.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	objs = append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(objs, func(i, j int) bool {
		oi, ok := applyOrder[objs[i].GetKind()]
		if !ok {
			oi = len(applyOrder)
		}
		oj, ok := applyOrder[objs[j].GetKind()]
		if !ok {
			oj = len(applyOrder)
		}
		return oi < oj
	})
	for _, o := range objs {
		m, err := host.RESTMapping(o.GroupVersionKind())
		if err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if _, err := host.Create(context.Background(), m.Resource, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// serviceAccountDir writes what a pod of the ServiceAccount ns/name finds under
// /var/run/secrets/kubernetes.io/serviceaccount: a token of the account (TokenRequest, an
// hour), the host's CA, the namespace.
func serviceAccountDir(t *testing.T, cs kubernetes.Interface, ca []byte, ns, name string) string {
	t.Helper()
	hour := int64(3600)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for file, data := range map[string][]byte{"token": []byte(tok.Status.Token), "ca.crt": ca, "namespace": []byte(ns)} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// asPod returns the one Deployment of objs (applied in cluster), with what its pod would
// find there: its ServiceAccount's credentials in a directory (serviceAccountDir) and the
// in-cluster environment, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT.
func asPod(t *testing.T, env *testenv.Env, cluster string, objs []*unstructured.Unstructured) (deployment appsv1.Deployment, dir string, podEnv []string) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &deployment); err != nil {
				t.Fatal(err)
			}
		}
	}
	pod := deployment.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("the Deployment %s has %d containers; want 1", deployment.Name, len(pod.Containers))
	}
	cfg := env.Config(cluster)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir = serviceAccountDir(t, cs, cfg.CAData, deployment.Namespace, pod.ServiceAccountName)
	server, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return deployment, dir, []string{"KUBERNETES_SERVICE_HOST=" + server.Hostname(), "KUBERNETES_SERVICE_PORT=" + server.Port()}
}

// config/default on a host that authorizes with RBAC: its objects are applied (its
// Deployment cannot start pods here, the servers run no kubelet), then the binary runs as
// the Deployment's pod would: its args, its ServiceAccount's token and the host's CA where a
// pod has them (--serviceaccount-dir points there), KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT, no kubeconfig. It finds the in-cluster configuration, leads
// through the Lease in its namespace, and config/samples/hello.yaml (README's first
// federated object) propagates to both members. SIGTERM releases the Lease.
func TestDefaultManifestsInCluster(t *testing.T) {
	env, host := setup(t)
	objs := render(t, filepath.Join(configDir, "default"))
	apply(t, host, objs)
	deployment, dir, podEnv := asPod(t, env, hostName, objs)
	pod := deployment.Spec.Template.Spec
	p := managertest.Start(t, managertest.Options{
		Args: append(append([]string{}, pod.Containers[0].Args...), "--serviceaccount-dir="+dir),
		Env:  podEnv,
	})
	p.WaitReady(t)
	if !p.Logged("Starting") || !strings.Contains(p.Logs(), `"config":"in-cluster (`+dir+`)"`) {
		t.Fatalf("not started with the in-cluster configuration:\n%s", p.Logs())
	}
	fedtest.Eventually(t, "the Lease fedkit-controlplane held in the pod's namespace", func() bool {
		who, _ := holder(t, host, deployment.Namespace, "fedkit-controlplane")
		return who != ""
	})

	// The README's third command: kubectl apply -f config/samples/hello.yaml.
	apply(t, host, documents(t, filepath.Join(configDir, "samples", "hello.yaml")))
	for _, m := range memberNames {
		member := env.Client(t, m)
		fedtest.Eventually(t, m+" has the sample's ConfigMap fedkit-demo/hello", func() bool {
			_, err := member.Get(context.Background(), configMaps, "fedkit-demo", "hello")
			return err == nil
		})
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.Logs())
	}
	if who, _ := holder(t, host, deployment.Namespace, "fedkit-controlplane"); who != "" {
		t.Errorf("Lease %s/fedkit-controlplane still held by %q after SIGTERM; want it released", deployment.Namespace, who)
	}
}
