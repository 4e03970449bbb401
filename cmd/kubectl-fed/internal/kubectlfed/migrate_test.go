package kubectlfed

import (
	"path/filepath"
	"strings"
	"testing"
)

// samples is KubeFed's own example/sample1 and scheduling sample (migrate's test data), a
// directory, as `kubectl fed migrate -f example/sample1` reads one.
var samples = filepath.Join("..", "..", "..", "..", "migrate", "testdata", "kubefed-sample")

// TestMigrateFailsOnLoss: migrate exits 1 and writes nothing to standard output when it would
// leave out an object or a field (here KubeFed's FederatedClusterRole, which fedkit has no
// type for), naming each; --allow-loss writes the rest and exits 0.
func TestMigrateFailsOnLoss(t *testing.T) {
	code, out, errOut := run(t, "", "migrate", "-f", samples)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing written\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"lost: FederatedClusterRole test-clusterrole: ", "lost: FederatedClusterRoleBinding test-clusterrolebinding: ", "--allow-loss"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	code, out, errOut = run(t, "", "migrate", "-f", samples, "--allow-loss")
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
