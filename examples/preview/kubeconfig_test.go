package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, "aws", "gcp"))
}

// TestKubeconfig: --kubeconfig reads the member objects from real API servers, one per
// context, and --contexts maps the specification's Clusters to them. aws has the
// Deployment with another image (sync would update it), gcp has none (a create).
func TestKubeconfig(t *testing.T) {
	env := testenv.Shared(t)
	kc := clientcmdapi.NewConfig()
	for _, name := range env.Names() {
		cfg := env.Config(name)
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))

	aws, err := kube.New(env.Config("aws"), kube.Options{})
	require.NoError(t, err)
	// In order: the namespace before the Deployment in it (a map's order is random).
	for _, obj := range []struct {
		gvr schema.GroupVersionResource
		doc string
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, `{apiVersion: v1, kind: Namespace, metadata: {name: production}}`},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-frontend
  namespace: production
  labels: {app: frontend, federation.k8s.io/managed-by: fedkit}
spec:
  replicas: 6
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend}}
    spec: {containers: [{name: nginx, image: "nginx:1.24", ports: [{containerPort: 80}], resources: {requests: {cpu: 250m, memory: 128Mi}}}]}
`},
	} {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(obj.doc), &u.Object))
		// The API servers are shared by the whole run: with -count, the first pass made them.
		if _, err := aws.Create(ctx, obj.gvr, u); !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"-f", spec, "--kubeconfig", path, "--contexts", "cluster-aws-us-east=aws,cluster-gcp-eu-west=gcp"}, &out, now))
	for _, want := range []string{
		"  cluster-aws-us-east  yes     6         Update  ",
		"  cluster-gcp-eu-west  yes     3         Create  ",
		`    /spec/template/spec/containers/0/image: "nginx:1.24" -> "nginx:1.25"`,
	} {
		require.Contains(t, out.String(), want)
	}
	require.NotContains(t, out.String(), "/spec/replicas:", "replicas equal; the server's defaults are not differences")
}
