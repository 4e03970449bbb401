package sync_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The package's two halves (see the package documentation): the pure decision, which
// Plan is the entry point of, and the acting pass, which reads, calls Plan and carries out
// its Decision. Every file of the package is in one of them.
var (
	decisionFiles = []string{
		"reasons.go",        // every reason the package writes
		"plan.go",           // Plan, its input and its Decision
		"targets.go",        // where an object goes (TargetsFor), waiting for the scheduler
		"render.go",         // the render of each placed cluster, and its input key
		"member.go",         // the decision for one cluster's member object
		"compare.go",        // drift: the owned fields that differ
		"diff.go",           // drift, for people: OwnedDiff
		"fieldschema.go",    // drift: the member type's fields as the server stores them
		"rollout.go",        // staged rollouts: DecideRollout
		"rollout_stages.go", // staged rollouts: the stages over the placed clusters
		"rollout_stable.go", // staged rollouts: the stable revision
		"rollout_plan.go",   // staged rollouts: what the held-back clusters render from
		"member_check.go",   // what the member's server would refuse is not sent (InvalidMember)
	}
	passFiles = []string{
		"doc.go", "options.go", "reconcile.go", "apply.go", "reads.go", "memory.go", "revision.go",
		"rollback.go", "rollout_pass.go", "status.go", "events.go", "events_pass.go", "wait.go",
		"delete.go", "namespace.go", "cluster.go", "run.go", "writers.go", "limiter.go", "metrics.go",
		"triggers.go", // Run's triggers for an embedder's own queue
	}
)

// Imports a decision file never has: clients, clocks, the process.
var ioImports = []string{
	"context", "net", "net/http", "os", "os/exec", "io/fs", "sync/atomic", "k8s.io/utils/clock",
	"github.com/fedkit/fedkit/federation/kube", "github.com/fedkit/fedkit/internal/loop",
	"github.com/fedkit/fedkit/internal/metrics", "github.com/go-logr/logr",
}

// federation's types that do I/O: a decision file never names them.
var ioTypes = []string{"ClusterClient", "ClusterSet", "Reader", "MemberCache", "VersionReader", "EventRecorder", "EventSink"}

// What the decision does inside Plan: the pass never calls it itself (it would decide again,
// beside Plan), it calls Plan.
var decisionInternals = []string{
	"planFor", "decideMember", "renderPlaced", "renderMembers", "inputKey", "inputKeys",
	"DecideRollout", "heldBack", "withRevision", "withRevisions", "previousOf",
	"refusedMember", "withUnknownFields",
}

func parseDir(t *testing.T) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, n, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = f
	}
	return out
}

// TestLayoutEveryFileHasItsHalf: a new file says which half it is in.
func TestLayoutEveryFileHasItsHalf(t *testing.T) {
	files := parseDir(t)
	for n := range files {
		if !slices.Contains(decisionFiles, n) && !slices.Contains(passFiles, n) {
			t.Errorf("%s is in neither decisionFiles nor passFiles (layout_test.go)", n)
		}
	}
	for _, n := range append(slices.Clone(decisionFiles), passFiles...) {
		if files[n] == nil {
			t.Errorf("%s is listed in layout_test.go but is not in the package", n)
		}
	}
}

// TestLayoutDecisionIsPure: the decision files do no I/O: no context, no client, no clock
// read, no Syncer state.
func TestLayoutDecisionIsPure(t *testing.T) {
	files := parseDir(t)
	for _, n := range decisionFiles {
		f := files[n]
		if f == nil {
			t.Errorf("%s: missing", n)
			continue
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			// client-go's scheme is a registry of Go types (the member type's fields), not a client.
			client := strings.HasPrefix(path, "k8s.io/client-go") && path != "k8s.io/client-go/kubernetes/scheme"
			if slices.Contains(ioImports, path) || client || strings.HasPrefix(path, "sigs.k8s.io/controller-runtime") {
				t.Errorf("%s imports %s", n, path)
			}
		}
		ast.Inspect(f, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "federation" && slices.Contains(ioTypes, x.Sel.Name) {
					t.Errorf("%s names federation.%s", n, x.Sel.Name)
				}
				if x.Sel.Name == "Clock" {
					t.Errorf("%s reads a clock (.Clock)", n)
				}
			case *ast.CallExpr:
				if name := calledName(x); name == "Now" || name == "Since" || name == "Until" || name == "Sleep" {
					t.Errorf("%s reads the time (%s)", n, name)
				}
			case *ast.FuncDecl:
				if x.Recv != nil && len(x.Recv.List) == 1 && strings.Contains(exprString(x.Recv.List[0].Type), "Syncer") {
					t.Errorf("%s: method %s on the Syncer", n, x.Name.Name)
				}
			}
			return true
		})
	}
}

// TestLayoutPassCallsPlan: the pass files carry out Plan's Decision and never call what Plan
// does inside, so no rule is stated twice.
func TestLayoutPassCallsPlan(t *testing.T) {
	files := parseDir(t)
	for _, n := range passFiles {
		f := files[n]
		if f == nil {
			continue
		}
		ast.Inspect(f, func(x ast.Node) bool {
			if c, ok := x.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && slices.Contains(decisionInternals, id.Name) {
					t.Errorf("%s calls %s: the pass calls Plan and acts on its Decision", n, id.Name)
				}
			}
			return true
		})
	}
}

func calledName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	}
	return ""
}
