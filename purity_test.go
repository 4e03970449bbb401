package fedkit_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// purePackages are the packages ARCHITECTURE.md marks PURE: deterministic functions of their
// arguments, with no I/O, clock, goroutine or logger (a loop calls them and acts).
var purePackages = []string{"placement", "override", "sync/plan", "autoscale/recommend", "internal/quorum", "migrate", "preview"}

// ioImports are imports a pure package never has: clients, clocks, loggers, metrics, the
// process. client-go's scheme is a registry of Go types (a member type's fields), not a
// client.
var ioImports = []string{
	"net", "net/http", "os", "os/exec", "io/fs", "sync/atomic", "k8s.io/utils/clock", "github.com/go-logr/logr",
	module + "/internal/loop", module + "/internal/metrics", module + "/federation/kube", module + "/hostcache",
}

// ioPrefixes are import prefixes a pure package never has.
var ioPrefixes = []string{"k8s.io/client-go/", "sigs.k8s.io/controller-runtime", "github.com/prometheus/"}

// clockCalls are the time package's functions that read the clock or wait: a pure function
// takes its time as an argument.
var clockCalls = []string{"Now", "Since", "Until", "Sleep", "After", "Tick", "NewTimer", "NewTicker", "AfterFunc"}

// TestPurePackages: the PURE packages (this module's decisions, which sync/layout_test.go
// checked for sync's decision files before sync/plan was a package) import no client, clock,
// logger or metrics, read no clock and start no goroutine.
func TestPurePackages(t *testing.T) {
	for _, pkg := range purePackages {
		names, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, problem := range impurities(f) {
				t.Errorf("%s: %s (a PURE package: ARCHITECTURE.md)", name, problem)
			}
		}
	}
}

// TestPurePackagesRejects proves the check can fail.
func TestPurePackagesRejects(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"pure", `package p; import ("time"; "k8s.io/client-go/kubernetes/scheme"); func f(now time.Time) time.Time { _ = scheme.Scheme; return now.Add(time.Second) }`, 0},
		{"a client", `package p; import "k8s.io/client-go/dynamic"; var _ dynamic.Interface`, 1},
		{"the loop engine", `package p; import "github.com/fedkit/fedkit/internal/loop"; var _ loop.Cache`, 1},
		{"prometheus", `package p; import "github.com/prometheus/client_golang/prometheus"; var _ prometheus.Counter`, 1},
		{"a logger", `package p; import "github.com/go-logr/logr"; var _ logr.Logger`, 1},
		{"the clock", `package p; import "time"; func f() time.Time { return time.Now() }`, 1},
		{"a sleep", `package p; import "time"; func f() { time.Sleep(time.Second) }`, 1},
		{"a goroutine", `package p; func f() { go f() }`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := impurities(f); len(got) != tc.want {
				t.Errorf("impurities(%s) = %q; want %d", tc.name, got, tc.want)
			}
		})
	}
}

// impurities lists what makes f impure.
func impurities(f *ast.File) []string {
	var out []string
	timeName := ""
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		client := slices.ContainsFunc(ioPrefixes, func(p string) bool { return strings.HasPrefix(path, p) }) && path != "k8s.io/client-go/kubernetes/scheme"
		if slices.Contains(ioImports, path) || client {
			out = append(out, "imports "+path)
		}
		if path == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, "starts a goroutine")
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && slices.Contains(clockCalls, sel.Sel.Name) {
					out = append(out, "reads the clock (time."+sel.Sel.Name+")")
				}
			}
		}
		return true
	})
	return out
}

// previewLoops are the loop packages whose pure halves preview calls (scheduler.Decide, the
// DNS endpoints, the dependencies' extractors, the policies' precedence) and which bring the
// loop engine (internal/loop) and Prometheus with them, since each keeps its pure half and
// its loop in one package. sync is not among them: preview calls sync/plan, which links
// neither. The list only shrinks: a package that gets a pure package of its own leaves it.
var previewLoops = []string{"scheduler", "dnsrecord", "dependencies", "propagation"}

// TestPreviewLinksNoSyncLoop reads preview's dependency list (go list -deps): the Syncer's
// package is not in it, and the loop engine and Prometheus come only through previewLoops,
// each of which still brings them.
func TestPreviewLinksNoSyncLoop(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./preview").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		graph[f[0]] = f[1:]
	}
	for _, problem := range previewLinks(graph, module+"/preview") {
		t.Error(problem)
	}
}

// TestPreviewLinksRejects proves the check can fail.
func TestPreviewLinksRejects(t *testing.T) {
	p := func(s string) string { return module + "/" + s }
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  int
	}{
		{"pure", withLoops(map[string][]string{p("preview"): {p("sync/plan")}}), 0},
		{"the Syncer", withLoops(map[string][]string{p("preview"): {p("sync")}, p("sync"): {p("sync/plan")}}), 1},
		{"the loop engine directly", withLoops(map[string][]string{p("preview"): {p("internal/loop")}}), 1},
		{"Prometheus through another package", withLoops(map[string][]string{p("preview"): {p("status")}, p("status"): {"github.com/prometheus/client_golang/prometheus"}}), 1},
		{"loops listed that preview no longer needs", map[string][]string{p("preview"): {p("sync/plan")}}, len(previewLoops)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := previewLinks(tc.graph, p("preview")); len(got) != tc.want {
				t.Errorf("previewLinks(%s) = %q; want %d", tc.name, got, tc.want)
			}
		})
	}
}

// withLoops is graph with preview importing each of previewLoops, each linking the loop
// engine, and the engine Prometheus.
func withLoops(graph map[string][]string) map[string][]string {
	root := module + "/preview"
	for _, loop := range previewLoops {
		graph[root] = append(graph[root], module+"/"+loop)
		graph[module+"/"+loop] = []string{module + "/internal/loop"}
	}
	graph[module+"/internal/loop"] = []string{"github.com/prometheus/client_golang/prometheus"}
	return graph
}

// previewLinks lists what is wrong with root's dependencies in graph (package: its imports).
func previewLinks(graph map[string][]string, root string) []string {
	var out []string
	for _, loop := range previewLoops {
		if !slices.Contains(graph[root], module+"/"+loop) || linkPath(graph, module+"/"+loop, map[string]bool{}) == nil {
			out = append(out, fmt.Sprintf("previewLoops lists %s, through which preview no longer links the loop engine: remove it", loop))
		}
	}
	for _, dep := range graph[root] {
		if slices.Contains(previewLoops, rel(dep)) {
			continue
		}
		if dep == module+"/sync" {
			out = append(out, "preview imports sync: it calls sync/plan, the Syncer's decision, not the Syncer")
			continue
		}
		if path := linkPath(graph, dep, map[string]bool{}); path != nil {
			out = append(out, fmt.Sprintf("preview links the loop engine or Prometheus through %s", strings.Join(path, " -> ")))
		}
	}
	return out
}

// linkPath returns the import path from pkg to internal/loop or a Prometheus package, nil
// when there is none.
func linkPath(graph map[string][]string, pkg string, seen map[string]bool) []string {
	if pkg == module+"/internal/loop" || pkg == module+"/sync" || strings.HasPrefix(pkg, "github.com/prometheus/") {
		return []string{pkg}
	}
	if seen[pkg] {
		return nil
	}
	seen[pkg] = true
	for _, dep := range graph[pkg] {
		if path := linkPath(graph, dep, seen); path != nil {
			return append([]string{pkg}, path...)
		}
	}
	return nil
}
