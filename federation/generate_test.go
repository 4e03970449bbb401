package federation_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedUpToDate runs controller-gen into a temporary directory and compares its output
// with the committed deep copies and CRD schemas, so a type change without `make generate`
// fails CI instead of shipping stale code.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen (about a minute cold)")
	}
	tmp := t.TempDir()
	for _, args := range [][]string{
		{"tool", "controller-gen", "object", "paths=./", "output:object:dir=" + tmp},
		{"tool", "controller-gen", "crd:allowDangerousTypes=false", "paths=./", "output:crd:dir=" + filepath.Join(tmp, "crds")},
	} {
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	files := []string{"zz_generated.deepcopy.go"}
	crds, err := filepath.Glob(filepath.Join(tmp, "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range crds {
		files = append(files, filepath.Join("crds", filepath.Base(f)))
	}
	committed, _ := filepath.Glob("crds/*.yaml")
	if len(committed) != len(crds) {
		t.Errorf("crds/ has %d files, controller-gen makes %d; run make generate", len(committed), len(crds))
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v; run make generate", f, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run make generate", f)
		}
	}
}
