package preview_test

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/preview"
)

// updateGolden is the package's one -update flag: it rewrites the golden files under
// testdata/ from the code.
var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/ from the code")

// TestPreviewDependencies: the preview lists each workload's dependencies with the union of
// the clusters of every workload whose pods need them (after overrides: web's us pods read
// creds-us), how each follows, and a missing one, a refused one (credentials) and one whose
// own placement refuses the workload's cluster as problems; the user's federated ConfigMap
// gains its workloads' clusters, but for the one it excludes. Refresh the golden file with
// -update.
func TestPreviewDependencies(t *testing.T) {
	data, err := os.ReadFile("testdata/dependencies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in, err := preview.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	in.Now, in.AssumeReady = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true
	rep, err := preview.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Object       string               `json:"object"`
		Clusters     []string             `json:"clusters"`
		Dependencies []preview.Dependency `json:"dependencies,omitempty"`
		Problems     []string             `json:"problems,omitempty"`
	}
	var got []entry
	for _, o := range rep.Objects {
		e := entry{Object: o.Kind + " " + o.Namespace + "/" + o.Name, Dependencies: o.Dependencies}
		for _, c := range o.Clusters {
			if c.Selected {
				e.Clusters = append(e.Clusters, c.Name)
			}
		}
		for _, p := range o.Problems {
			e.Problems = append(e.Problems, p.String())
		}
		got = append(got, e)
	}
	out, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/dependencies.golden.yaml"
	if *updateGolden {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run: go test ./preview -run TestPreviewDependencies -update)", err)
	}
	if diff := cmp.Diff(string(want), string(out)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
}
