package fedkit_test

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/fedkit/fedkit"

// allowedImports is the import table of DESIGN.md: the packages of this module that each
// package may import. Imports point down, never up or sideways. Packages under internal/ may
// import only federation and are importable by everything; examples/ and test/ may import
// anything; fake is for tests, examples and users' tests, so no library package imports it.
var allowedImports = map[string][]string{
	"": nil, // the root package is documentation only
	// federation imports only internal packages that import nothing from the module.
	"federation":       {"internal/imageref", "internal/jsonpointer", "internal/labelselector"},
	"placement":        {"federation"},
	"override":         {"federation"},
	"dnsrecord":        {"federation"},
	"scheduler":        {"federation", "placement"},
	"sync":             {"federation", "placement", "override"},
	"status":           {"federation"},
	"federation/kube":  {"federation"},
	"fake":             {"federation"},
	"controlplane":     {"federation", "federation/kube", "placement", "override", "dnsrecord", "scheduler", "sync", "status"},
	"internal/tools":   nil,
	"internal/testenv": {"federation"},
	// internal/labelselector: the one meaning of a label selector (the API machinery's);
	// imported by federation (validation), placement and override.
	"internal/labelselector": nil,
	// internal/jsonpointer: RFC 6901 pointers as override paths (checks, escaping, identity
	// paths); imported by federation (validation) and override.
	"internal/jsonpointer": nil,
	// internal/imageref: Docker's image reference grammar, parsing and rewriting; imported by
	// federation (validation) and override.
	"internal/imageref": nil,
}

// layerOf maps a package path (relative to the module) to its row in allowedImports.
func layerOf(rel string) (layer string, anything bool) {
	switch {
	case rel == "examples" || strings.HasPrefix(rel, "examples/"), rel == "test" || strings.HasPrefix(rel, "test/"),
		strings.HasPrefix(rel, "hack/"):
		return "", true
	case strings.HasPrefix(rel, "internal/"):
		if _, ok := allowedImports[rel]; ok {
			return rel, false
		}
		return "internal/*", false
	case strings.HasPrefix(rel, "controlplane/"):
		return "controlplane", false
	}
	return rel, false
}

// TestLayering fails when a package imports a fedkit package that DESIGN.md's table does not
// allow. It reads the real import graph with `go list`.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowedImports["internal/*"] = []string{"federation"}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		layer, anything := layerOf(pkg)
		if anything {
			continue
		}
		allowed, known := allowedImports[layer]
		if !known {
			t.Errorf("package %q is not in DESIGN.md's import table; add it to allowedImports (and DESIGN.md) deliberately", pkg)
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if strings.HasPrefix(dep, "internal/") && dep != "internal/testenv" && layer != "federation" {
				continue // internal helpers serve every layer but federation
			}
			if !contains(allowed, dep) {
				sort.Strings(allowed)
				t.Errorf("%s imports %s; DESIGN.md allows only %v", pkg, dep, allowed)
			}
		}
	}
	if seen == 0 {
		t.Fatal("go list returned no packages to check")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
