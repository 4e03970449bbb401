package fedkit_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fedkit/fedkit"

// allowedImports is the import table of ARCHITECTURE.md: the packages of this module that each
// package may import (non-test imports; tests may import anything). Imports point down, never
// up or sideways. examples/, test/ and hack/ may import anything; fake is for tests, examples
// and users' tests, so no library package imports it.
//
// Every internal package has its own row here and its own entry in internalImporters: an
// internal helper is not a back door around the table.
var allowedImports = map[string][]string{
	"": nil, // the root package is documentation only
	// federation imports only internal packages that import nothing from the module.
	"federation": {"internal/imageref", "internal/jsonpointer", "internal/labelselector"},
	"placement":  {"federation", "internal/labelselector"},
	"override":   {"federation", "internal/imageref", "internal/jsonpointer", "internal/jsonvalue", "internal/labelselector"},
	"dnsrecord":  {"federation", "gate", "hostcache", "internal/loop", "internal/metrics", "internal/condition"},
	"scheduler":  {"federation", "placement", "override", "hostcache", "internal/loop", "internal/metrics", "internal/condition"},
	// sync is the driver of sync/plan, its pure decision: read, decide, act, report.
	"sync":      {"federation", "placement", "override", "sync/plan", "gate", "hostcache", "internal/loop", "internal/metrics", "internal/jsonvalue"},
	"sync/plan": {"federation", "placement", "override", "gate", "internal/condition", "internal/labelselector", "internal/jsonvalue"},
	// gate: the invariants every destructive write keeps, and the one function that sends
	// it (PURE checks; its Delete, Update and Create call the client they are given).
	"gate":   {"federation"},
	"status": {"federation", "placement", "kinds", "hostcache", "internal/loop", "internal/metrics", "internal/condition", "internal/quorum"},
	// kinds: a kind's rules in CEL, compiled and evaluated (PURE).
	"kinds": {"federation"},
	// autoscale is the driver of autoscale/recommend, its pure decision: it samples the
	// members, decides and writes the fleet's total; the scheduler's division for the
	// bounds of Distributed mode.
	"autoscale":           {"federation", "autoscale/recommend", "gate", "scheduler", "hostcache", "internal/loop", "internal/metrics", "internal/condition", "internal/labelselector"},
	"autoscale/recommend": {"federation", "internal/quorum"},
	// propagation turns native host objects selected by policies into Federated<Kind>.
	"propagation":     {"federation", "gate", "hostcache", "internal/loop", "internal/metrics", "internal/condition", "internal/labelselector"},
	"federation/kube": {"federation", "hostcache", "internal/loop"},
	"fake":            {"federation", "internal/manifest", "internal/jsonvalue", "internal/intern"},
	"preview":         {"federation", "gate", "kinds", "placement", "scheduler", "override", "sync/plan", "autoscale/recommend", "dnsrecord", "dependencies", "propagation", "internal/manifest"},
	// dependencies: PURE extractors and union, and the loop that makes dependents follow;
	// placement says which clusters a user's dependency refuses, override renders each
	// cluster's pods (what they reference after overrides), as sync renders them.
	"dependencies": {"federation", "gate", "placement", "override", "kinds", "hostcache", "internal/loop", "internal/metrics", "internal/condition"},
	"migrate":      {"federation", "internal/manifest"},
	// agent: pull mode, both ends: the agent in a member (it applies Assignments with
	// sync/plan's rules and override's retention) and the host's ClusterSet of Assignments.
	"agent": {"federation", "override", "sync/plan", "autoscale/recommend", "internal/condition"},
	// The kubectl plugin, an application of the packages: main only calls its own
	// cmd/kubectl-fed/internal/kubectlfed, which calls the library.
	"cmd/kubectl-fed":                     {"cmd/kubectl-fed/internal/kubectlfed"},
	"cmd/kubectl-fed/internal/kubectlfed": {"agent", "federation", "federation/kube", "kinds", "preview", "sync", "status", "migrate", "config/rbac/member", "internal/manifest"},
	// config/rbac/member embeds member.yaml and secrets.yaml for `kubectl fed join`.
	"config/rbac/member": nil,
	"controlplane":       {"federation", "gate", "federation/kube", "placement", "override", "kinds", "dnsrecord", "scheduler", "sync", "status", "dependencies", "propagation", "autoscale", "internal/loop", "internal/metrics", "internal/condition", "hostcache", "internal/lease", "internal/statuswrite"},
	// internal/statuswrite: the shared status writer the control plane gives its loops.
	"internal/statuswrite": {"federation"},
	"internal/loop":        {"federation", "internal/metrics", "internal/intern"},
	"hostcache":            {"federation", "internal/loop"},
	// internal/metrics: registering a loop's Prometheus collectors (shared between loops),
	// the families every loop reports into, the work queue metrics provider.
	"internal/metrics": {"federation"},
	// internal/condition: setting a condition and bounding its message, for every loop.
	"internal/condition": nil,
	"internal/tools":     nil,
	"internal/testenv":   {"federation", "federation/kube"},
	// internal/managertest runs fedkit-controller-manager as a process for test/.
	"internal/managertest": nil,
	// The control plane's program is an embedder like any other: public packages only.
	"cmd/fedkit-controller-manager": {"agent", "controlplane", "federation", "federation/kube", "hostcache", "scheduler", "sync", "status", "dnsrecord", "dependencies", "propagation", "placement", "cmd/internal/process"},
	// The pull-mode agent's program: the agent package on client-go's clients.
	"cmd/fedkit-agent": {"agent", "federation/kube", "cmd/internal/process"},
	// What fedkit's programs share as processes (configuration, logger, version), and its
	// test helpers.
	"cmd/internal/process":             nil,
	"cmd/internal/process/processtest": nil,
	// internal/fedtest is the support fedkit's tests share (fake host and fleet, waits).
	"internal/fedtest": {"federation", "fake"},
	// internal/storytest reads and runs story files (tests only): the scheduler's,
	// sync/plan's and autoscale's stories.
	"internal/storytest": nil,
	// internal/conformance is the behaviour suite run against fake and a real API server.
	"internal/conformance": {"federation"},
	// internal/labelselector: the one meaning of a label selector (the API machinery's);
	// imported by federation (validation), placement, override and sync/plan (rollout stages).
	"internal/labelselector": nil,
	"internal/quorum":        nil,
	// internal/jsonpointer: RFC 6901 pointers as override paths (checks, escaping, identity
	// paths); imported by federation (validation) and override.
	"internal/jsonpointer": nil,
	// internal/imageref: Docker's image reference grammar, parsing and rewriting; imported by
	// federation (validation) and override.
	"internal/imageref": nil,
	// internal/jsonvalue: one equality of JSON values; imported by override, sync, sync/plan
	// and fake.
	"internal/jsonvalue": nil,
	// internal/intern: equal flat maps of stored objects shared; imported by fake and
	// internal/loop.
	"internal/intern": nil,
	// internal/lease: leader election and shard claiming on coordination.k8s.io Leases
	// through any federation.ClusterClient; imported by controlplane.
	"internal/lease": {"federation"},
	// internal/manifest: strict multi-document YAML (duplicate keys, unknown fields, with
	// document, line and field); imported by fake (Apply) and preview (Decode).
	"internal/manifest": nil,
}

// internalImporters says which packages may import each internal package (beyond examples/,
// test/ and hack/, which may import anything). An internal package missing here may be
// imported by nothing but those.
var internalImporters = map[string][]string{
	"internal/loop":          {"scheduler", "sync", "status", "dnsrecord", "dependencies", "propagation", "autoscale", "controlplane", "federation/kube", "hostcache"},
	"internal/metrics":       {"scheduler", "sync", "status", "dnsrecord", "dependencies", "propagation", "autoscale", "controlplane", "internal/loop"},
	"internal/condition":     {"agent", "scheduler", "sync/plan", "status", "dnsrecord", "dependencies", "propagation", "autoscale", "controlplane"},
	"internal/lease":         {"controlplane"},
	"internal/statuswrite":   {"controlplane"},
	"internal/quorum":        {"status", "autoscale/recommend"},
	"internal/labelselector": {"federation", "placement", "override", "sync/plan", "propagation", "autoscale"},
	"internal/jsonpointer":   {"federation", "override"},
	"internal/imageref":      {"federation", "override"},
	"internal/jsonvalue":     {"override", "sync", "sync/plan", "fake"},
	"internal/intern":        {"fake", "internal/loop"},
	"internal/manifest":      {"fake", "preview", "migrate", "cmd/kubectl-fed/internal/kubectlfed"},
}

// internalBelow is all a package under internal/ may import from the module besides other
// internal packages: the API, the real client and the fake. An internal package is a helper
// of the packages above it, never an application of them (that lives under cmd/, as
// cmd/kubectl-fed/internal/kubectlfed does), so the import graph never runs upward from
// internal/.
var internalBelow = []string{"federation", "federation/kube", "fake"}

// layerOf maps a package path (relative to the module) to its row in allowedImports.
func layerOf(rel string) (layer string, anything bool) {
	switch {
	case rel == "examples" || strings.HasPrefix(rel, "examples/"), rel == "test" || strings.HasPrefix(rel, "test/"),
		strings.HasPrefix(rel, "hack/"):
		return "", true
	case strings.HasPrefix(rel, "controlplane/"):
		return "controlplane", false
	}
	return rel, false
}

// TestLayering fails when a package imports a fedkit package that ARCHITECTURE.md's table
// does not allow. It reads the real import graph with `go list` (so `make test` runs it with
// -count=1: go test's cache cannot see import changes).
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if _, anything := layerOf(rel(fields[0])); !anything {
			seen++
		}
		for _, v := range violations(fields[0], fields[1:]) {
			t.Error(v)
		}
	}
	if seen == 0 {
		t.Fatal("go list returned no packages to check")
	}
}

// TestLayeringRejects proves the check can fail: what the table forbids is reported.
func TestLayeringRejects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pkg     string
		imports []string
		want    int
	}{
		{"allowed", "placement", []string{"federation"}, 0},
		{"sideways", "placement", []string{"override"}, 1},
		{"upwards", "federation", []string{"scheduler"}, 1},
		{"test suite in a library", "placement", []string{"internal/conformance"}, 2},
		{"internal helper outside its importers", "override", []string{"internal/loop"}, 2},
		{"fake in a library", "sync", []string{"fake"}, 1},
		{"the control plane imports every loop", "controlplane", []string{"federation/kube", "scheduler", "sync", "status", "dnsrecord", "internal/loop"}, 0},
		{"but not fake", "controlplane", []string{"fake"}, 1},
		{"unknown package", "newpkg", nil, 1},
		{"examples import anything", "examples/quickstart", []string{"fake", "internal/testenv"}, 0},
		{"an internal package imports no loop", "internal/loop", []string{"sync"}, 2},
		{"nor preview", "internal/manifest", []string{"preview"}, 2},
		{"the plugin's logic is under cmd/", "cmd/kubectl-fed/internal/kubectlfed", []string{"preview", "sync", "internal/manifest"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imports := []string{"fmt", "k8s.io/client-go/tools/cache"} // outside the module: ignored
			for _, imp := range tc.imports {
				imports = append(imports, module+"/"+imp)
			}
			if got := violations(module+"/"+tc.pkg, imports); len(got) != tc.want {
				t.Errorf("violations(%s, %v) = %q; want %d", tc.pkg, tc.imports, got, tc.want)
			}
		})
	}
	for internal := range internalImporters {
		if _, ok := allowedImports[internal]; !ok {
			t.Errorf("%s has importers but no row of its own in allowedImports", internal)
		}
	}
	for pkg, allowed := range allowedImports {
		for _, dep := range allowed {
			if strings.HasPrefix(pkg, "internal/") && !strings.HasPrefix(dep, "internal/") && !slices.Contains(internalBelow, dep) {
				t.Errorf("allowedImports lets %s import %s, above internal/; want it under cmd/ or the import gone", pkg, dep)
			}
		}
	}
}

// TestArchitectureTable keeps ARCHITECTURE.md's import table and allowedImports one table:
// every package has a row of its own there (an internal package shares no row), every row
// names one package that allowedImports knows, and a row names each package it may import
// ("nothing" when it may import none; the control plane's row says "everything but fake").
func TestArchitectureTable(t *testing.T) {
	data, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n## Import table\n")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no \"## Import table\" section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 || cells[0] != "" || strings.HasPrefix(cells[1], "---") || strings.TrimSpace(cells[1]) == "package" {
			continue
		}
		pkg, imports := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if _, known := allowedImports[pkg]; !known {
			t.Errorf("ARCHITECTURE.md's import table has a row %q; want one package per row, each a key of allowedImports", pkg)
			continue
		}
		rows[pkg] = imports
	}
	for pkg, allowed := range allowedImports {
		imports, ok := rows[pkg]
		switch {
		case pkg == "":
			continue // the root package is documentation only
		case !ok:
			t.Errorf("%s has no row of its own in ARCHITECTURE.md's import table", pkg)
		case len(allowed) == 0 && !strings.HasPrefix(imports, "nothing"):
			t.Errorf("ARCHITECTURE.md's row for %s says %q; want it to start with \"nothing\"", pkg, imports)
		case strings.HasPrefix(imports, "everything but fake"):
			if slices.Contains(allowed, "fake") {
				t.Errorf("ARCHITECTURE.md's row for %s says everything but fake; allowedImports has fake", pkg)
			}
		default:
			words := strings.FieldsFunc(imports, func(r rune) bool { return r != '/' && r != '_' && r != '-' && (r < 'a' || r > 'z') })
			for _, dep := range allowed {
				if !slices.Contains(words, dep) {
					t.Errorf("ARCHITECTURE.md's row for %s does not name %s, which allowedImports lets it import", pkg, dep)
				}
			}
		}
	}
}

// violations lists what is wrong with pkg importing imports (full import paths).
func violations(pkg string, imports []string) []string {
	layer, anything := layerOf(rel(pkg))
	if anything {
		return nil
	}
	allowed, known := allowedImports[layer]
	if !known {
		return []string{fmt.Sprintf("package %q is not in ARCHITECTURE.md's import table; add it to allowedImports (and ARCHITECTURE.md) deliberately", layer)}
	}
	var out []string
	for _, imp := range imports {
		if imp != module && !strings.HasPrefix(imp, module+"/") {
			continue
		}
		dep := rel(imp)
		if !slices.Contains(allowed, dep) {
			out = append(out, fmt.Sprintf("%s imports %s; ARCHITECTURE.md allows only %v", layer, dep, sorted(allowed)))
		}
		if strings.HasPrefix(layer, "internal/") && !strings.HasPrefix(dep, "internal/") && !slices.Contains(internalBelow, dep) {
			out = append(out, fmt.Sprintf("%s imports %s; an internal package imports only internal packages and %v: an application of the packages lives under cmd/", layer, dep, internalBelow))
		}
		if strings.HasPrefix(dep, "internal/") && !slices.Contains(internalImporters[dep], layer) {
			out = append(out, fmt.Sprintf("%s imports %s, which may be imported only by %v", layer, dep, sorted(internalImporters[dep])))
		}
	}
	return out
}

func rel(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
