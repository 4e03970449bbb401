package kubectlfed

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kubeFedSamples is KubeFed's own example/sample1 and scheduling sample (migrate's test
// data), one stream.
func kubeFedSamples(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "migrate", "testdata", "kubefed-sample", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String()
}

// TestMigrateFailsOnLoss: migrate exits 1 and writes nothing to standard output when it would
// leave out an object or a field (here KubeFed's FederatedClusterRole, which fedkit has no
// type for), naming each; --allow-loss writes the rest and exits 0.
func TestMigrateFailsOnLoss(t *testing.T) {
	in := kubeFedSamples(t)
	code, out, errOut := run(t, in, "migrate", "-f", "-")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing written\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"lost: FederatedClusterRole test-clusterrole: ", "lost: FederatedClusterRoleBinding test-clusterrolebinding: ", "--allow-loss"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	code, out, errOut = run(t, in, "migrate", "-f", "-", "--allow-loss")
	if code != 0 {
		t.Fatalf("--allow-loss: exit %d\nstderr:\n%s", code, errOut)
	}
	for _, want := range []string{"kind: Namespace\nmetadata:\n  name: test-namespace\n", "kind: FederatedDeployment\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--allow-loss: stdout lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "lost: FederatedClusterRole test-clusterrole: ") {
		t.Errorf("--allow-loss: stderr does not name what was lost:\n%s", errOut)
	}
}
