package controlplane_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// gateDelete is the one function fedkit deletes with (package gate).
const gateDelete = "github.com/fedkit/fedkit/gate.(*Gate).Delete"

// userKey marks the context of a delete the test makes as the user.
type userKey struct{}

// deleteGuard records every delete sent to the host and the members, and who sent it: the
// gate (and which package called it), the user (the test), the fake's own simulated
// controllers, or anything else, which is a violation.
type deleteGuard struct {
	mu         sync.Mutex
	gated      map[string]int // calling package -> deletes sent through the gate
	violations []string
}

// watch sets c's Delete hook to record each delete (cluster "" is the host).
func (g *deleteGuard) watch(c *fake.Cluster, cluster string) {
	c.SetHooks(fake.Hooks{Delete: func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
		g.record(ctx, cluster, gvr, ns, name)
		return next.Delete(ctx, gvr, ns, name, opts)
	}})
}

// record classifies one delete by its call path.
func (g *deleteGuard) record(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) {
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
		gated = gated || f.Function == gateDelete
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
// garbage collector, namespace controller, workloads), not from fedkit's loops.
func simulated(stack []string) bool {
	for _, f := range stack {
		if strings.HasPrefix(f, "github.com/fedkit/fedkit/") && !strings.HasPrefix(f, "github.com/fedkit/fedkit/fake.") {
			return false
		}
	}
	return true
}

// packageOf is the import path of a function's package, from its runtime name.
func packageOf(fn string) string {
	slash := strings.LastIndex(fn, "/")
	if dot := strings.Index(fn[slash+1:], "."); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

// TestEveryDeleteGoesThroughTheGate runs a whole control plane over a story that deletes from
// every loop (propagation's generated objects when a policy goes, dependencies' generated
// objects, sync's member copies when a workload moves and when it is deleted) and fails on
// any delete of a host or member object that was not sent by the gate.
func TestEveryDeleteGoesThroughTheGate(t *testing.T) {
	f := fedtest.New(t, fedtest.Options{Members: []fedtest.Member{{Name: "eu"}, {Name: "us"}}, Workloads: fake.Workloads{Apps: true}})
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock}
	guard := &deleteGuard{gated: map[string]int{}}
	guard.watch(e.host, "")
	for _, c := range []string{"eu", "us"} {
		guard.watch(f.Member(t, c), c)
	}
	startWebAndAPI(t, e)
	user := context.WithValue(context.Background(), userKey{}, true)
	deployments := federation.DeploymentType.TargetGVR()

	in := func(gvr schema.GroupVersionResource, name string) string {
		var out []string
		for _, c := range []string{"eu", "us"} {
			if _, err := f.Member(t, c).Peek(gvr, "default", name); err == nil {
				out = append(out, c)
			}
		}
		return name + " " + strings.Join(out, ",")
	}
	seen := func() string {
		return strings.Join([]string{in(deployments, "web"), in(deployments, "api"), in(configMapGVR, "shared"), in(secretGVR, "api-token")}, "; ")
	}
	settled := func(want string) func() bool { return func() bool { return seen() == want } }
	stepUntilf(t, e.clock, time.Second, func() string { return "both workloads placed: " + seen() },
		settled("web eu,us; api us; shared eu,us; api-token us"))

	// The policy of web goes: propagation deletes its generated FederatedDeployment.
	require.NoError(t, e.host.Delete(user, federation.ClusterPropagationPolicyGVR, "", "frontend", metav1.DeleteOptions{}))
	stepUntil(t, e.clock, time.Second, "web's FederatedDeployment deleted", func() bool {
		_, err := e.host.Peek(federation.DeploymentType.FederatedGVR(), "default", "web")
		return err != nil
	})
	// api moves to eu: sync deletes its copy in us once eu's runs; its Secret leaves us.
	fedtest.Apply(t, e.host, federation.ClusterPropagationPolicyGVR, clusterPolicy("backend", "api", "eu"))
	stepUntilf(t, e.clock, time.Second, func() string { return "api moved to eu: " + seen() }, func() bool {
		return strings.HasPrefix(seen(), "web eu,us; api eu; ") && strings.HasSuffix(seen(), "api-token eu")
	})
	// api is deleted: its copy goes, and dependencies delete its generated Secret.
	require.NoError(t, e.host.Delete(user, deployments, "default", "api", metav1.DeleteOptions{}))
	stepUntilf(t, e.clock, time.Second, func() string { return "api deleted: " + seen() }, func() bool {
		_, err := e.host.Peek(federation.SecretType.FederatedGVR(), "default", "api-token")
		return strings.Contains(seen(), "api ;") && strings.HasSuffix(seen(), "api-token ") && err != nil
	})

	guard.mu.Lock()
	defer guard.mu.Unlock()
	require.Empty(t, guard.violations)
	var callers []string
	for p := range guard.gated {
		callers = append(callers, p)
	}
	slices.Sort(callers)
	for _, want := range []string{"github.com/fedkit/fedkit/dependencies", "github.com/fedkit/fedkit/propagation", "github.com/fedkit/fedkit/sync"} {
		require.Contains(t, callers, want, "deletes through the gate came from %v", guard.gated)
	}
}

// TestShardLeasesAreDeletedThroughTheGate: a replica that lets its shards go deletes its
// presence Lease (Lease.ReleaseOnCancel); that delete, too, goes through the gate.
func TestShardLeasesAreDeletedThroughTheGate(t *testing.T) {
	e := newEnv(t)
	guard := &deleteGuard{gated: map[string]int{}}
	guard.watch(e.host, "")
	l := fastLease()
	l.ReleaseOnCancel = true
	r := e.replica(t, newJournal(), "a", func(o *controlplane.Options) { o.Sharding = &controlplane.Sharding{Count: 2, Lease: l} })
	r.start(t)
	realEventually(t, "both shards held", func() bool { return len(r.shards()) == 2 })
	require.NoError(t, r.stop())

	guard.mu.Lock()
	defer guard.mu.Unlock()
	require.Empty(t, guard.violations)
	require.Positive(t, guard.gated["github.com/fedkit/fedkit/controlplane"], "the presence Lease deleted through the gate: %v", guard.gated)
}
