package fedtest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	gosync "sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// GateDelete is the one function fedkit deletes with (package gate): a delete whose call path
// holds it went through the gate.
const GateDelete = "github.com/fedkit/fedkit/gate.(*Gate).Delete"

// userKey marks the context of a delete a test makes as the user.
type userKey struct{}

// AsUser is ctx marked as the user's: a DeleteGuard lets the deletes made with it through.
func AsUser(ctx context.Context) context.Context {
	return context.WithValue(ctx, userKey{}, true)
}

// DeleteGuard records every delete sent to the clusters it watches and who sent it, by the
// call path: the gate (and which package called it), the user (AsUser), the fake's own
// simulated controllers, or anything else, which is a violation.
type DeleteGuard struct {
	mu         gosync.Mutex
	gated      map[string]int // calling package -> deletes sent through the gate
	violations []string
}

// NewDeleteGuard returns a guard that watches nothing yet.
func NewDeleteGuard() *DeleteGuard {
	return &DeleteGuard{gated: map[string]int{}}
}

// Watch sets c's hooks (replacing any) to record each delete; cluster names it ("" for the
// host) in violations.
func (g *DeleteGuard) Watch(c *fake.Cluster, cluster string) {
	c.SetHooks(fake.Hooks{Delete: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
		g.record(ctx, cluster, gvr, ns, name)
		return next.Delete(ctx, gvr, ns, name, opts)
	}})
}

// Check fails t when a delete came from anywhere but the gate, the user or the fake, or when
// one of callers (package import paths) sent no delete through the gate.
func (g *DeleteGuard) Check(t testing.TB, callers ...string) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.violations) > 0 {
		t.Fatalf("%d deletes not through the gate:\n%s", len(g.violations), strings.Join(g.violations, "\n"))
	}
	for _, c := range callers {
		if g.gated[c] == 0 {
			t.Fatalf("%s sent no delete through the gate; the gate's callers: %v", c, g.gated)
		}
	}
}

// record classifies one delete by its call path.
func (g *DeleteGuard) record(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	var stack []string
	caller, gated := "", false
	for {
		f, more := frames.Next()
		stack = append(stack, f.Function)
		if gated && caller == "" {
			caller = packageOf(f.Function)
		}
		gated = gated || f.Function == GateDelete
		if !more {
			break
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case gated:
		g.gated[caller]++
	case ctx.Value(userKey{}) != nil, simulated(stack):
	default:
		g.violations = append(g.violations, fmt.Sprintf("delete %s %s/%s in %q not through the gate:\n\t%s",
			gvr.Resource, ns, name, cluster, strings.Join(stack, "\n\t")))
	}
}

// simulated reports whether a delete comes from the fake's own simulated controllers (its
// garbage collector, namespace controller, workloads), not from fedkit's packages.
func simulated(stack []string) bool {
	return !slices.ContainsFunc(stack, func(f string) bool {
		return strings.HasPrefix(f, "github.com/fedkit/fedkit/") && !strings.HasPrefix(f, "github.com/fedkit/fedkit/fake.") &&
			!strings.HasPrefix(f, "github.com/fedkit/fedkit/internal/fedtest.")
	})
}

// packageOf is the import path of a function's package, from its runtime name.
func packageOf(fn string) string {
	slash := strings.LastIndex(fn, "/")
	if dot := strings.Index(fn[slash+1:], "."); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}
