package fedkit_test

import (
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/dnsrecord"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
	"github.com/fedkit/fedkit/scheduler"
	"github.com/fedkit/fedkit/status"
	fedsync "github.com/fedkit/fedkit/sync"
)

// TestDocLinks checks the doc links of every package of the module: a [Name] or [Type.Method]
// that names nothing exported in its package renders as plain bracketed text on pkg.go.dev
// and in gopls, silently (federation's errors.go linked a [ValidationError] that did not
// exist), and so does a [pkg.Name] to a package of this module that has no such name, or a
// link definition to its pkg.go.dev page. Links to packages outside the module, and to
// packages a file does not import, are not checked.
func TestDocLinks(t *testing.T) {
	pkgs := parseModule(t)
	syms := map[string]map[string]bool{} // import path -> its names, "Type.Method" included
	for _, p := range pkgs {
		syms[p.importPath] = p.symbols()
	}
	var broken []string
	for _, p := range pkgs {
		parser := p.doc.Parser()
		for _, c := range p.docComments() {
			where := p.fset.Position(c.Pos())
			rel, _ := filepath.Rel(".", where.Filename)
			for _, text := range linkedText(parser.Parse(c.Text())) {
				switch x := text.(type) {
				case comment.Plain:
					for _, m := range unresolved(string(x)) {
						broken = append(broken, rel+":"+strconv.Itoa(where.Line)+": "+m+" names nothing in package "+p.doc.Name)
					}
				case *comment.Link:
					if m := checkedURL(x.URL, syms); m != "" {
						broken = append(broken, rel+":"+strconv.Itoa(where.Line)+": "+m)
					}
				case *comment.DocLink:
					names, ok := syms[x.ImportPath]
					if !ok || x.ImportPath == p.importPath {
						continue // outside the module, or resolved in the package already
					}
					name := x.Name
					if x.Recv != "" {
						name = x.Recv + "." + x.Name
					}
					if !names[name] {
						broken = append(broken, rel+":"+strconv.Itoa(where.Line)+": ["+path.Base(x.ImportPath)+"."+name+"] names nothing in "+x.ImportPath)
					}
				}
			}
		}
	}
	sort.Strings(broken)
	if len(broken) > 0 {
		t.Errorf("broken doc links:\n%s", strings.Join(broken, "\n"))
	}
}

// godocPrefix starts the pkg.go.dev address of this module's packages, which a link
// definition ("[federation.Key]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#Key")
// uses where a doc link cannot resolve: the root package's tutorial imports nothing.
const godocPrefix = "https://pkg.go.dev/" + module + "/"

// checkedURL returns what is wrong with a link to a name of this module's documentation, or
// "" when the link is fine or points elsewhere.
func checkedURL(url string, syms map[string]map[string]bool) string {
	rest, ok := strings.CutPrefix(url, godocPrefix)
	if !ok {
		return ""
	}
	pkg, name, _ := strings.Cut(rest, "#")
	names, ok := syms[module+"/"+pkg]
	switch {
	case !ok:
		return url + " names no package of the module"
	case name != "" && !names[name]:
		return url + " names nothing in " + module + "/" + pkg
	}
	return ""
}

// modulePackage is one package of the module, parsed without its tests.
type modulePackage struct {
	importPath string
	fset       *token.FileSet
	files      []*ast.File
	doc        *doc.Package
}

// parseModule parses every package of the module (not the nested modules of examples/, not
// testdata).
func parseModule(t *testing.T) []*modulePackage {
	t.Helper()
	var out []*modulePackage
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		base := d.Name()
		if dir != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && dir != "." {
			return filepath.SkipDir // a module of its own
		}
		fset := token.NewFileSet()
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var files []*ast.File
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			return nil
		}
		importPath := module
		if dir != "." {
			importPath = module + "/" + filepath.ToSlash(dir)
		}
		// doc.NewFromFiles drops unexported declarations only from its lists, not from
		// the symbols a link may name: PreserveAST keeps the files usable below.
		dp, err := doc.NewFromFiles(fset, files, importPath, doc.AllDecls|doc.PreserveAST)
		if err != nil {
			return err
		}
		out = append(out, &modulePackage{importPath: importPath, fset: fset, files: files, doc: dp})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// symbols returns the package's top-level names and its types' methods and fields, as doc
// links name them.
func (p *modulePackage) symbols() map[string]bool {
	out := map[string]bool{}
	for _, f := range p.files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					out[d.Name.Name] = true
					continue
				}
				out[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
						for _, f := range fieldsOf(s.Type) {
							for _, n := range f.Names {
								out[s.Name.Name+"."+n.Name] = true
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// docComments returns the comments that documentation renders: the package's, and those of
// declarations, struct fields and interface methods.
func (p *modulePackage) docComments() []*ast.CommentGroup {
	var out []*ast.CommentGroup
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			var cg *ast.CommentGroup
			switch n := n.(type) {
			case *ast.File:
				cg = n.Doc
			case *ast.GenDecl:
				cg = n.Doc
			case *ast.FuncDecl:
				cg = n.Doc
			case *ast.TypeSpec:
				cg = n.Doc
			case *ast.ValueSpec:
				cg = n.Doc
			case *ast.Field:
				cg = n.Doc
			case *ast.BlockStmt:
				return false // comments inside function bodies are not documentation
			}
			if cg != nil {
				out = append(out, cg)
			}
			return true
		})
	}
	return out
}

func recvName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

func fieldsOf(x ast.Expr) []*ast.Field {
	switch x := x.(type) {
	case *ast.StructType:
		return x.Fields.List
	case *ast.InterfaceType:
		return x.Methods.List
	}
	return nil
}

// linkedText returns the text of a parsed comment's paragraphs, lists and headings (not its
// code blocks), links and plain text flattened.
func linkedText(d *comment.Doc) []comment.Text {
	var out []comment.Text
	var walk func(ts []comment.Text)
	walk = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case comment.Italic:
				out = append(out, comment.Plain(t))
			case *comment.Link:
				out = append(out, t)
				walk(t.Text)
			default:
				out = append(out, t)
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.Heading:
			walk(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						walk(p.Text)
					}
				}
			}
		}
	}
	return out
}

// linkLike matches what go/doc/comment would take for a doc link to an exported name: [Name],
// [Type.Name], [*Name], not preceded or followed by a letter, digit or underscore, nor quoted.
// Bracketed lower-case words ("[redacted]") are left alone: they are text as often as links
// to unexported names, which documentation does not show anyway.
var linkLike = regexp.MustCompile(`(^|[^\w\]"'` + "`" + `])(\[\*?[A-Z]\w*(\.[A-Za-z_]\w*)?\])($|[^\w\[(:"'` + "`" + `])`)

// unresolved returns the bracketed names in plain text that the comment parser left as text.
func unresolved(s string) []string {
	var out []string
	for _, m := range linkLike.FindAllStringSubmatch(s, -1) {
		out = append(out, m[2])
	}
	return out
}

var update = flag.Bool("update", false, "rewrite testdata/metrics.txt and the table of METRICS.md from the loops' metrics")

// recordingRegisterer is a registry that remembers every collector registered into it.
type recordingRegisterer struct {
	*prometheus.Registry
	mu         sync.Mutex
	collectors []prometheus.Collector
}

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	err := r.Registry.Register(c)
	if err == nil {
		r.mu.Lock()
		r.collectors = append(r.collectors, c)
		r.mu.Unlock()
	}
	return err
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// metric is one family a loop registers.
type metric struct {
	name, typ, help string
	labels          []string
}

// TestMetrics lists every metric family the loops register (their constructors, and Run for
// the work queues), checks them against Prometheus' conventions and the project's own
// (fedkit_ prefix unless controller-runtime's, shared label names, _total counters, _seconds
// for durations), and
// compares the list with testdata/metrics.txt and the table in METRICS.md: a metric added,
// renamed or relabelled without updating the documentation fails here. Refresh both with
// go test . -run TestMetrics -update.
func TestMetrics(t *testing.T) {
	reg := &recordingRegisterer{Registry: prometheus.NewPedanticRegistry()}
	startEveryLoop(t, reg)
	metrics := describe(t, reg)

	for _, m := range metrics {
		checkConventions(t, m)
	}
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}

	var list strings.Builder
	for _, m := range metrics {
		fmt.Fprintf(&list, "%s %s {%s}\n", m.name, m.typ, strings.Join(m.labels, ","))
	}
	golden(t, "testdata/metrics.txt", list.String())
	doc, err := os.ReadFile("METRICS.md")
	require.NoError(t, err)
	want := withTable(t, string(doc), table(metrics))
	if *update {
		require.NoError(t, os.WriteFile("METRICS.md", []byte(want), 0o644))
	} else if want != string(doc) {
		t.Errorf("METRICS.md's table differs from the loops' metrics; run go test . -run TestMetrics -update")
	}
}

// startEveryLoop builds every loop on a fake host with reg, and runs each just long enough
// for it to register its work queue's metrics (its clock never moves: nothing else happens).
func startEveryLoop(t *testing.T, reg prometheus.Registerer) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	host, fleet := fake.NewHost("host"), fake.NewFleet()
	typ := federation.DeploymentType
	s, err := scheduler.New(host, typ, scheduler.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	y, err := fedsync.New(host, fleet, typ, fedsync.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	c, err := status.New(host, fleet, typ, status.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	m, err := status.NewClusterMonitor(host, fleet, status.MonitorOptions{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	d, err := dnsrecord.New(host, fleet, dnsrecord.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)
	p, err := propagation.New(host, []federation.TypeConfig{typ}, propagation.Options{Clock: clk, Registerer: reg})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{s.Run, y.Run, c.Run, m.Run, d.Run, p.Run} {
		wg.Go(func() { _ = run(ctx) })
	}
	queues := []string{"scheduler/FederatedDeployment", "sync/FederatedDeployment", "sync/FederatedDeployment/clusters",
		"status/FederatedDeployment", "cluster-monitor", "dnsrecord", "propagation/FederatedDeployment"}
	require.Eventually(t, func() bool {
		mfs, err := reg.(prometheus.Gatherer).Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "workqueue_depth" {
				return len(mf.GetMetric()) == len(queues)
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "every loop's Run names its work queue")
	cancel()
	wg.Wait()
}

var variableLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)

// describe returns the families of every collector registered, sorted by name. It gives
// each labelled family one series (labels "x") so that gathering shows its type and help.
func describe(t *testing.T, reg *recordingRegisterer) []metric {
	for _, c := range reg.collectors {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			names := strings.Split(variableLabels.FindStringSubmatch(d.String())[1], ",")
			values := make([]string, len(names))
			for i := range values {
				values[i] = "x"
			}
			switch v := c.(type) {
			case *prometheus.CounterVec:
				v.WithLabelValues(values...)
			case *prometheus.GaugeVec:
				v.WithLabelValues(values...)
			case *prometheus.HistogramVec:
				v.WithLabelValues(values...)
			case interface { // a family that wraps a GaugeVec (status' summed stale members)
				WithLabelValues(...string) prometheus.Gauge
			}:
				v.WithLabelValues(values...)
			}
		}
	}
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var out []metric
	for _, mf := range mfs {
		m := metric{name: mf.GetName(), typ: strings.ToLower(mf.GetType().String()), help: mf.GetHelp()}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			m.labels = append(m.labels, l.GetName())
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b metric) int { return strings.Compare(a.name, b.name) })
	return out
}

// sharedLabels are the label names the loops use; a family with any other is a typo or a
// new dimension that must be added on purpose.
var sharedLabels = []string{"loop", "type", "outcome", "cluster", "verb", "result", "name", "controller", "priority"}

// controllerRuntimeFamilies are the families the loops report under controller-runtime's
// names (its work queue and reconcile metrics), so that one dashboard reads both and
// controller-runtime's registry accepts them; every other family is fedkit's own, prefixed
// fedkit_. examples/controllerruntime proves that their help and labels are
// controller-runtime's.
var controllerRuntimeFamilies = []string{
	"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds", "workqueue_work_duration_seconds",
	"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds", "workqueue_retries_total",
	"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
	"controller_runtime_terminal_reconcile_errors_total", "controller_runtime_reconcile_time_seconds",
	"controller_runtime_max_concurrent_reconciles", "controller_runtime_active_workers",
}

func checkConventions(t *testing.T, m metric) {
	t.Helper()
	if !strings.HasPrefix(m.name, "fedkit_") && !slices.Contains(controllerRuntimeFamilies, m.name) {
		t.Errorf("%s: neither prefixed fedkit_ nor one of controller-runtime's families", m.name)
	}
	switch m.typ {
	case "counter":
		if !strings.HasSuffix(m.name, "_total") {
			t.Errorf("%s: a counter's name ends in _total", m.name)
		}
	case "histogram", "gauge":
		if strings.HasSuffix(m.name, "_total") {
			t.Errorf("%s: only counters end in _total", m.name)
		}
	default:
		t.Errorf("%s: unexpected type %s", m.name, m.typ)
	}
	if m.typ == "histogram" && !strings.HasSuffix(m.name, "_seconds") {
		t.Errorf("%s: fedkit's histograms are durations, in seconds", m.name)
	}
	for _, bad := range []string{"_milliseconds", "_ms", "_minutes", "_count", "_sum", "_bucket"} {
		if strings.Contains(m.name, bad) {
			t.Errorf("%s: use base units and leave %s to Prometheus", m.name, bad)
		}
	}
	for _, l := range m.labels {
		if !slices.Contains(sharedLabels, l) {
			t.Errorf("%s: label %q is none of %v", m.name, l, sharedLabels)
		}
	}
	if m.help == "" {
		t.Errorf("%s: no help", m.name)
	}
}

const (
	tableBegin = "<!-- BEGIN METRICS TABLE: generated by go test . -run TestMetrics -update -->"
	tableEnd   = "<!-- END METRICS TABLE -->"
)

func table(metrics []metric) string {
	var b strings.Builder
	b.WriteString("| metric | type | labels | meaning |\n|---|---|---|---|\n")
	for _, m := range metrics {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.name, m.typ, strings.Join(m.labels, ", "), strings.ReplaceAll(m.help, "|", `\|`))
	}
	return b.String()
}

// withTable returns doc with the text between its table markers replaced by tbl.
func withTable(t *testing.T, doc, tbl string) string {
	t.Helper()
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	require.True(t, i >= 0 && j > i, "METRICS.md lacks the table markers %q and %q", tableBegin, tableEnd)
	return doc[:i+len(tableBegin)] + "\n" + tbl + doc[j:]
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test . -run TestMetrics -update")
	if string(want) != got {
		t.Errorf("%s differs from the loops' metrics (run go test . -run TestMetrics -update and update METRICS.md):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
