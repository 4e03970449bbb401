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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
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
