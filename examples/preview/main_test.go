package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/testenv"
	"github.com/fedkit/fedkit/preview"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	ctx  = context.Background()
	now  = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	spec = filepath.Join("testdata", "app-frontend.yaml")
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s changed (-want +got); run go test ./examples/preview -update if intended:\n%s", path, diff)
	}
}

// TestSpecification: the specification's FederatedDeployment, its preference and Clusters,
// as people and machines read the preview. `go run ./examples/preview -f
// examples/preview/testdata/app-frontend.yaml` prints the first.
func TestSpecification(t *testing.T) {
	for _, tc := range []struct{ output, file string }{{"text", "app-frontend.txt"}, {"json", "app-frontend.json"}} {
		t.Run(tc.output, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(ctx, []string{"-f", spec, "-o", tc.output}, &out, now))
			golden(t, tc.file, out.Bytes())
		})
	}
}

// TestRollout: the specification's FederatedDeployment with a three-stage rollout (a canary
// by name, a region by selector, then 100%), as the host holds it after revision 1 rolled
// out and the image changed: the rollout table says which cluster revision 2 reaches in
// which stage and what each stage waits for. The last stage has no cluster left: the first
// two took both.
func TestRollout(t *testing.T) {
	file := filepath.Join("testdata", "app-frontend-rollout.yaml")
	for _, tc := range []struct{ output, file string }{{"text", "app-frontend-rollout.txt"}, {"json", "app-frontend-rollout.json"}} {
		t.Run(tc.output, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(ctx, []string{"-f", file, "-o", tc.output}, &out, now))
			golden(t, tc.file, out.Bytes())
		})
	}
}

// TestLive: with member objects read from a cluster set, each cluster's change. On
// cluster-aws-us-east someone scaled the Deployment by hand; on cluster-gcp-eu-west a
// Deployment of the same name exists that the federation did not create.
func TestLive(t *testing.T) {
	data, err := os.ReadFile(spec)
	require.NoError(t, err)
	in, err := preview.Decode(data)
	require.NoError(t, err)
	in.Now = now
	dry, err := preview.Run(in)
	require.NoError(t, err)

	fleet := fake.NewFleet()
	aws := fleet.Add("cluster-aws-us-east", nil)
	gcp := fleet.Add("cluster-gcp-eu-west", nil)
	synced := dry.Objects[0].Clusters[0].Manifest.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(synced.Object, int64(2), "spec", "replicas"))
	require.NoError(t, aws.Seed(synced))
	theirs := dry.Objects[0].Clusters[1].Manifest.DeepCopy()
	theirs.SetLabels(nil)
	theirs.SetAnnotations(nil)
	require.NoError(t, gcp.Seed(theirs))

	in.Live, err = readLive(ctx, fleet, map[string]string{"cluster-aws-us-east": "cluster-aws-us-east", "cluster-gcp-eu-west": "cluster-gcp-eu-west"}, in)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, report(&out, in, "text"))
	golden(t, "app-frontend-live.txt", out.Bytes())
}

// TestErrors: a report with errors is printed, and the command fails.
func TestErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.yaml")
	data, err := os.ReadFile(spec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, bytes.Replace(data, []byte("path: /spec/replicas"), []byte("path: /spec/replicaz/x"), 1), 0o644))
	var out bytes.Buffer
	err = run(ctx, []string{"-f", file}, &out, now)
	require.EqualError(t, err, "1 error(s) in the input")
	require.Contains(t, out.String(), `Error: FederatedDeployment production/app-frontend: spec.overrides[0].clusterOverrides[0].path: cluster "cluster-gcp-eu-west": replace /spec/replicaz/x: `)

	for _, args := range [][]string{{}, {"-f", spec, "-o", "yaml"}, {"-f", spec, "--contexts", "a"}} {
		require.Error(t, run(ctx, args, &out, now), "%q", args)
	}
	_, _, err = contextsFor("a=,b", preview.Input{})
	require.Error(t, err)
	clusters, contexts, err := contextsFor("aws=kind-aws, gcp", preview.Input{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"aws": "kind-aws", "gcp": "gcp"}, clusters)
	require.Equal(t, []string{"kind-aws", "gcp"}, contexts)
}

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
		"  cluster-aws-us-east  yes     6                Update  ",
		"  cluster-gcp-eu-west  yes     4 (scheduled 3)  Create  ",
		`    /spec/template/spec/containers/0/image: "nginx:1.24" -> "nginx:1.25"`,
	} {
		require.Contains(t, out.String(), want)
	}
	require.NotContains(t, out.String(), "/spec/replicas:", "replicas equal; the server's defaults are not differences")
}

// TestPrintRollout: a stage's clusters say which ones the revision leaves unchanged or
// cannot reach; a paused rollout and its status are printed.
func TestPrintRollout(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, printRollout(&out, &preview.Rollout{
		Staged: true, StableRevision: 3, Paused: true,
		Note: "revision 4 goes stage by stage; each cluster keeps revision 3 until its stage starts (federation.k8s.io/rollout-paused holds the next stage)",
		Stages: []preview.RolloutStage{
			{Name: "canary", Unchanged: []string{"a"}, MinReadySeconds: 90, ProgressDeadlineSeconds: 600},
			{Name: "rest", Clusters: []string{"b", "c"}, Blocked: []string{"d"}, ProgressDeadlineSeconds: 3600},
			{Name: "remaining", Implicit: true, ProgressDeadlineSeconds: 600},
		},
		Status: &federation.RolloutStatus{Revision: 4, Phase: federation.RolloutPaused, Reason: "Paused",
			Message: "revision 4 waits before its first stage: the object carries federation.k8s.io/rollout-paused"},
	}))
	want := `
  Rollout: revision 4 goes stage by stage; each cluster keeps revision 3 until its stage starts (federation.k8s.io/rollout-paused holds the next stage)
  autoRollback: off (a failed rollout stops where it is); paused (federation.k8s.io/rollout-paused)

  STAGE                   CLUSTERS           MIN READY  DEADLINE
  1 canary                a (unchanged)      1m30s      10m0s
  2 rest                  b, c, d (blocked)  0s         1h0m0s
  3 remaining (implicit)  -                  0s         10m0s

  status.rollout: revision 4 Paused (Paused): revision 4 waits before its first stage: the object carries federation.k8s.io/rollout-paused
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("printRollout (-want +got):\n%s", diff)
	}
}
