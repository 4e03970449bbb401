package migrate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/fake"
)

// sampleInput is KubeFed's own samples (testdata/kubefed-sample, see its README), one stream
// in file name order, as `cat example/sample1/*.yaml` gives them to kubectl.
func sampleInput(t *testing.T) []byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "kubefed-sample", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	slices.Sort(files)
	var b bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.Bytes()
}

// TestKubeFedSamples: `kubectl fed migrate -f kubefed.yaml | kubectl apply -f -` on KubeFed's
// own samples. The output is the golden file, a fake host (which serves what a host with
// fedkit's CRDs serves and reads manifests as strictly as kubectl) applies all of it, and the
// only losses are the two kinds fedkit has no type for, each naming its object.
func TestKubeFedSamples(t *testing.T) {
	res, out := convert(t, sampleInput(t))
	compareGolden(t, filepath.Join("testdata", "kubefed-sample.golden.yaml"), report(out, res))

	var losses []string
	for _, w := range res.Losses() {
		losses = append(losses, w.Object)
	}
	want := []string{"FederatedClusterRole test-clusterrole", "FederatedClusterRoleBinding test-clusterrolebinding"}
	if diff := cmp.Diff(want, losses); diff != "" {
		t.Errorf("losses differ (-want +got):\n%s", diff)
	}
	if err := fake.NewHost("host").Apply(string(out)); err != nil {
		t.Fatalf("applying the converted samples: %v", err)
	}
}
