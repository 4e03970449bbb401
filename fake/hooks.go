package fake

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fedkit/fedkit/federation"
)

// ErrInjected is wrapped by the errors [Cluster.SetErrorRate] injects, so a test can tell an
// injected failure from a real one with errors.Is. Errors given to [Cluster.FailOn] are
// returned as they are.
var ErrInjected = errors.New("fake: injected fault")

// Verb names a kind of call, for recording and for injecting faults.
type Verb string

// The verbs of [federation.ClusterClient], plus the optional capabilities.
const (
	VerbGet          Verb = "get"
	VerbList         Verb = "list"
	VerbWatch        Verb = "watch"
	VerbCreate       Verb = "create"
	VerbUpdate       Verb = "update"
	VerbUpdateStatus Verb = "update-status"
	VerbPatch        Verb = "patch"
	VerbDelete       Verb = "delete"
	VerbHealth       Verb = "health"    // Healthy
	VerbVersion      Verb = "version"   // ServerVersion
	VerbDiscovery    Verb = "discovery" // ServedResources

	// VerbAll makes FailOn, SetErrorRate and SetLatency apply to every verb. A fault set for
	// a specific verb is consulted first.
	VerbAll Verb = "*"
)

// Hooks intercept calls to a cluster, one optional func per verb; nil passes the call through.
// A hook receives next, the cluster's storage without recording or faults, so it can delegate,
// change the arguments, or return its own result. Hooks run after the call is recorded and
// after partitions, latency and FailOn/SetErrorRate faults, so they see only calls that got
// through. Set them with [Cluster.SetHooks].
type Hooks struct {
	Get          func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
	List         func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	Create       func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	Update       func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	UpdateStatus func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	Patch        func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error)
	Delete       func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error
	Watch        func(ctx context.Context, next federation.ClusterClient, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error)
}

// SetHooks replaces the cluster's hooks; the zero Hooks removes them.
func (c *Cluster) SetHooks(h Hooks) {
	c.lock()
	defer c.mu.Unlock()
	c.hooks = h
}

// fault is what is injected for one verb.
type fault struct {
	err     error // FailOn
	times   int   // calls left to fail with err; 0 = every call
	rate    float64
	rng     *rand.Rand
	latency time.Duration
}

func (c *Cluster) faultLocked(v Verb) *fault {
	f := c.faults[v]
	if f == nil {
		f = &fault{}
		c.faults[v] = f
	}
	return f
}

// FailOn makes calls of verb fail with err: the next times calls, or every call when times is
// 0 or less. A nil err clears it. Use API errors (apierrors.NewConflict, NewServiceUnavailable,
// NewTimeoutError, ...) to look like a real server.
func (c *Cluster) FailOn(verb Verb, err error, times int) {
	c.lock()
	defer c.mu.Unlock()
	f := c.faultLocked(verb)
	f.err, f.times = err, max(times, 0)
}

// SetErrorRate makes each call of verb fail with probability rate (0 to 1), drawn from a
// pseudo-random source seeded with seed: the same seed and the same sequence of calls fail
// the same calls. The error is a 503 ServiceUnavailable (apierrors.IsServiceUnavailable) that
// wraps [ErrInjected]. A rate of 0 clears it.
func (c *Cluster) SetErrorRate(verb Verb, rate float64, seed uint64) {
	c.lock()
	defer c.mu.Unlock()
	f := c.faultLocked(verb)
	f.rate = min(max(rate, 0), 1)
	f.rng = rand.New(rand.NewPCG(seed, seed))
}

// SetLatency delays every call of verb by d on the cluster's clock (see [Cluster.SetClock])
// before it runs; a call whose ctx ends first returns ctx.Err(). 0 clears it.
func (c *Cluster) SetLatency(verb Verb, d time.Duration) {
	c.lock()
	defer c.mu.Unlock()
	c.faultLocked(verb).latency = max(d, 0)
}

// ResetFaults clears every FailOn, SetErrorRate and SetLatency, and the hooks. Partitions
// stay; heal them with [Cluster.Heal] or [Fleet.Heal].
func (c *Cluster) ResetFaults() {
	c.lock()
	defer c.mu.Unlock()
	c.faults = map[Verb]*fault{}
	c.hooks = Hooks{}
}

// begin records a call and applies, in order: ctx cancellation, partition, latency and
// injected errors. It returns the hooks to use when the call may proceed.
func (c *Cluster) begin(ctx context.Context, a Action) (Hooks, error) {
	c.lock()
	if c.counts == nil {
		c.counts = map[Verb]int{}
	}
	c.counts[a.Verb]++
	if !c.unrecorded {
		if a.Object != nil {
			a.Object = recordedObject(a.Object)
		}
		c.actions = append(c.actions, a)
	}
	hooks, clk, partitioned := c.hooks, c.clock, c.partitioned
	latency := c.latencyLocked(a.Verb)
	c.mu.Unlock()

	if err := ctx.Err(); err != nil {
		return hooks, err
	}
	if partitioned {
		return hooks, unreachable(c.name, a)
	}
	if latency > 0 {
		t := clk.NewTimer(latency)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return hooks, ctx.Err()
		}
	}
	c.lock()
	defer c.mu.Unlock()
	return hooks, c.injectedLocked(a.Verb)
}

func (c *Cluster) latencyLocked(v Verb) time.Duration {
	if f := c.faults[v]; f != nil && f.latency > 0 {
		return f.latency
	}
	if f := c.faults[VerbAll]; f != nil {
		return f.latency
	}
	return 0
}

// injectedLocked returns the error injected for this call of v, if any. FailOn errors come
// before error rates; the verb's own faults before VerbAll's.
func (c *Cluster) injectedLocked(v Verb) error {
	for _, key := range []Verb{v, VerbAll} {
		if f := c.faults[key]; f != nil && f.err != nil {
			err := f.err
			if f.times > 0 {
				if f.times--; f.times == 0 {
					f.err = nil
				}
			}
			return err
		}
	}
	for _, key := range []Verb{v, VerbAll} {
		if f := c.faults[key]; f != nil && f.rate > 0 && f.rng.Float64() < f.rate {
			return fmt.Errorf("%w: %w", ErrInjected,
				apierrors.NewServiceUnavailable(fmt.Sprintf("fake: injected failure of %s on cluster %q", v, c.name)))
		}
	}
	return nil
}
