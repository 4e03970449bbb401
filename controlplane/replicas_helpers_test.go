package controlplane_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

var (
	leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// fastLease is a Lease with durations short enough for tests on the real clock (elections
// cannot run on a fake one): a crashed holder's Lease is taken over about 2s later. Shorter
// ones (1s) make holders miss their RenewDeadline under -race on a loaded machine.
func fastLease() controlplane.Lease {
	return controlplane.Lease{Namespace: "default", LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 250 * time.Millisecond}
}

// replica is one control plane of several on the env's host and fleet, as a process would
// run it: its writes go through a recorder that checks, at each write, that the replica runs
// a loop owning the key written.
type replica struct {
	name string
	cp   *controlplane.ControlPlane
	stop func() error
	// blindLeases makes its Lists of Leases fail: a replica still starting, whose first look
	// at the Leases has not come back.
	blindLeases atomic.Bool
}

// journal is what the recorders saw: member objects created, by whom, and the writes made by
// a replica that ran no loop owning their key then.
type journal struct {
	mu       sync.Mutex
	creates  map[string][]string // "cluster ns/name" -> the replicas that created it
	writes   map[string]int      // replica -> writes
	wrongful []string
	all      []string // every write recorded, for failure messages
}

func newJournal() *journal {
	return &journal{creates: map[string][]string{}, writes: map[string]int{}}
}

// replica builds a control plane named name for a federated type, configured by with; the
// ClusterSet's Run and DNS are off (the test drives the fleet's clock alone).
func (e *env) replica(t *testing.T, j *journal, name string, with func(*controlplane.Options)) *replica {
	t.Helper()
	r := &replica{name: name}
	opts := e.options(federation.DeploymentType)
	opts.Disable.DNS, opts.Disable.ClusterSet = true, true
	opts.Identity = "fedkit" // the same control plane in every replica
	with(&opts)
	host := recorder{ClusterClient: e.host, j: j, r: r, cluster: "host"}
	cp, err := controlplane.New(host, recordingFleet{Fleet: e.fleet, j: j, r: r}, opts)
	require.NoError(t, err)
	r.cp = cp
	return r
}

// start runs the replica's control plane until stop (or the test's end).
func (r *replica) start(t *testing.T) {
	t.Helper()
	stop := run(r.cp)
	var once sync.Once
	var err error
	r.stop = func() error {
		once.Do(func() { err = stop() })
		return err
	}
	t.Cleanup(func() { _ = r.stop() })
}

// owns reports whether the replica runs a loop that owns key now.
func (r *replica) owns(key federation.Key) bool {
	for _, l := range r.cp.Status() {
		if l.State == controlplane.StateRunning && l.Shard.Owns(key) {
			return true
		}
	}
	return false
}

// shards returns the indexes of the shards the replica runs loops for.
func (r *replica) shards() []int {
	var out []int
	for _, l := range r.cp.Status() {
		if l.Shard.Sharded() && !slices.Contains(out, l.Shard.Index) {
			out = append(out, l.Shard.Index)
		}
	}
	slices.Sort(out)
	return out
}

// leads reports whether every loop of the replica runs (none stands by).
func (r *replica) leads() bool {
	for _, l := range r.cp.Status() {
		if l.State != controlplane.StateRunning {
			return false
		}
	}
	return true
}

// record records a write of key by r, which owned the key when the write started (owns) and
// ended with err. A write of a key r did not own is wrongful, failed or not.
func (j *journal) record(r *replica, cluster, verb string, gvr schema.GroupVersionResource, key federation.Key, owns bool, err error) {
	if gvr == leasesGVR || gvr == eventsGVR || (gvr == federation.ClusterGVR && verb == "patch") {
		// The elections' own writes; events, which the broadcaster sends later; and sync's
		// finalizer on a Cluster, which the Syncer of every shard adds before it creates
		// its first object there (the Cluster is not what it reconciles).
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.writes[r.name]++
	j.all = append(j.all, fmt.Sprintf("%s %s %s %s in %s: owned %t, error %v", r.name, verb, gvr.Resource, key, cluster, owns, err))
	if !owns {
		j.wrongful = append(j.wrongful, fmt.Sprintf("%s %s %s %s in %s", r.name, verb, gvr.Resource, key, cluster))
	}
	if verb == "create" && cluster != "host" && err == nil {
		k := cluster + " " + key.String()
		j.creates[k] = append(j.creates[k], r.name)
	}
}

// check fails when a replica wrote a key it ran no loop for.
func (j *journal) check(t *testing.T) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	require.Empty(t, j.wrongful, "writes by a replica that did not own the key then")
	t.Logf("writes per replica: %v", j.writes)
}

// about returns the writes recorded whose description contains s.
func (j *journal) about(s string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, w := range j.all {
		if strings.Contains(w, s) {
			out = append(out, w)
		}
	}
	return out
}

// recorded reports whether the creates of default/name in both members are recorded: a
// create lands in the fake before the recorder's call returns and records it.
func (j *journal) recorded(name string) bool {
	return len(j.creators("eu", name)) > 0 && len(j.creators("us", name)) > 0
}

// creators returns the replicas that created the member object default/name in cluster.
func (j *journal) creators(cluster, name string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.creates[cluster+" default/"+name])
}

// keyOf is the key a write belongs to: the object's own, or for sync's ControllerRevisions
// (named <federated name>-<hash>) the federated object's.
func keyOf(gvr schema.GroupVersionResource, ns, name string) federation.Key {
	if gvr.Resource == "controllerrevisions" {
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
	}
	return federation.Key{Namespace: ns, Name: name}
}

// recorder is a replica's connection to one cluster (or the host); its writes go to the
// journal.
type recorder struct {
	federation.ClusterClient
	j       *journal
	r       *replica
	cluster string
}

func (c recorder) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if gvr == leasesGVR && c.r.blindLeases.Load() {
		return nil, fmt.Errorf("%w: list timed out (test)", federation.ErrUnreachable)
	}
	return c.ClusterClient.List(ctx, gvr, ns, opts)
}

func (c recorder) Create(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	key := keyOf(gvr, u.GetNamespace(), u.GetName())
	owns := c.r.owns(key)
	out, err := c.ClusterClient.Create(ctx, gvr, u)
	c.j.record(c.r, c.cluster, "create", gvr, key, owns, err)
	return out, err
}

func (c recorder) Update(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	key := keyOf(gvr, u.GetNamespace(), u.GetName())
	owns := c.r.owns(key)
	out, err := c.ClusterClient.Update(ctx, gvr, u)
	c.j.record(c.r, c.cluster, "update", gvr, key, owns, err)
	return out, err
}

func (c recorder) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	key := keyOf(gvr, u.GetNamespace(), u.GetName())
	owns := c.r.owns(key)
	out, err := c.ClusterClient.UpdateStatus(ctx, gvr, u)
	c.j.record(c.r, c.cluster, "update-status", gvr, key, owns, err)
	return out, err
}

func (c recorder) Patch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	key := keyOf(gvr, ns, name)
	owns := c.r.owns(key)
	out, err := c.ClusterClient.Patch(ctx, gvr, ns, name, pt, data)
	c.j.record(c.r, c.cluster, "patch", gvr, key, owns, err)
	return out, err
}

func (c recorder) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	key := keyOf(gvr, ns, name)
	owns := c.r.owns(key)
	err := c.ClusterClient.Delete(ctx, gvr, ns, name, opts)
	c.j.record(c.r, c.cluster, "delete", gvr, key, owns, err)
	return err
}

// recordingFleet is the fleet as one replica reaches it: member clients record their writes;
// the member caches are the fleet's own.
type recordingFleet struct {
	*fake.Fleet
	j *journal
	r *replica
}

func (f recordingFleet) Client(name string) (federation.ClusterClient, error) {
	c, err := f.Fleet.Client(name)
	if err != nil {
		return nil, err
	}
	return recorder{ClusterClient: c, j: f.j, r: f.r, cluster: name}, nil
}

// realEventually waits for cond on the real clock: elections run on it, not on the env's.
func realEventually(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	require.Eventually(t, cond, 20*time.Second, 5*time.Millisecond, what)
	return time.Since(start)
}
