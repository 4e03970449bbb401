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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/internal/testenv"
)

var (
	leases           = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	configMaps       = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	fedConfigMaps    = federation.ConfigMapType.FederatedGVR()
	controllerRevs   = "controllerrevisions"
	runs             atomic.Int32 // numbers the tests' namespaces: -count=N runs again on the same servers
	settle           = 90 * time.Second
	replicaStopLimit = 30 * time.Second
)

// shortLease is the Leases' timing in these tests, as short as package lease's tests use on
// the real clock: a crashed leader's Lease is taken over about 2s later.
func shortLease(namespace, name string) controlplane.Lease {
	return controlplane.Lease{Namespace: namespace, Name: name, LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 250 * time.Millisecond}
}

// replica is one process's control plane on the shared servers: its own host client (whose
// Lease calls the test can cut off, as a partition would), its own ClusterSet, and every
// write it makes recorded in the journal.
type replica struct {
	name   string
	cp     *controlplane.ControlPlane
	host   *recorder
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startReplica starts a control plane for FederatedConfigMaps in namespace ns, configured
// by with, and stops it (as a crash would) at the test's end.
func startReplica(t *testing.T, env *testenv.Env, j *journal, name, ns string, with func(*controlplane.Options)) *replica {
	t.Helper()
	r := &replica{name: name, done: make(chan error, 1)}
	client := env.Client(t, hostName)
	set, err := kube.NewClusterSet(client, kube.ClusterSetOptions{})
	require.NoError(t, err)
	r.host = &recorder{ClusterClient: client, j: j, r: r, cluster: hostName}
	opts := controlplane.Options{Types: []federation.TypeConfig{federation.ConfigMapType}}
	opts.Disable.DNS = true
	opts.Scheduler.Namespace, opts.Sync.Namespace, opts.Status.Namespace = ns, ns, ns
	with(&opts)
	r.cp, err = controlplane.New(r.host, recordingSet{ClusterSet: set, j: j, r: r}, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- r.cp.Run(ctx) }()
	t.Cleanup(func() { r.kill(t) })
	return r
}

// kill stops the replica without releasing its Leases, as a crash would, and returns once
// its Run has returned.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			require.NoError(t, err, "replica %s", r.name)
		case <-time.After(replicaStopLimit):
			t.Errorf("replica %s did not stop", r.name)
		}
	})
}

// owns reports whether the replica runs a loop (not the cluster set, which every replica
// runs) that owns key now.
func (r *replica) owns(key federation.Key) bool {
	for _, l := range r.cp.Status() {
		if l.Name != controlplane.ClusterSetLoop && l.State == controlplane.StateRunning && l.Shard.Owns(key) {
			return true
		}
	}
	return false
}

// leads reports whether the replica runs its loops (leader election: it leads).
func (r *replica) leads() bool {
	for _, l := range r.cp.Status() {
		if l.Name != controlplane.ClusterSetLoop && l.State == controlplane.StateRunning {
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

// write is one write a replica made, with the times its call started and returned.
type write struct {
	who, cluster, verb string
	resource           string
	key                federation.Key
	start, end         time.Time
	err                error
	landed             bool      // a create that returned an error but made the object (see Create)
	uid                types.UID // the object a create made or found made (see do)
}

// journal records every write the replicas make, and those made by a replica that ran no
// loop owning the key when the write started.
type journal struct {
	mu       sync.Mutex
	writes   []write
	wrongful []string
}

// record records w, made by r, which owned its key when it started (owns).
func (j *journal) record(w write, owns bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.writes = append(j.writes, w)
	if !owns {
		j.wrongful = append(j.wrongful, fmt.Sprintf("%s %s %s %s in %s at %s", w.who, w.verb, w.resource, w.key, w.cluster, w.start.Format("15:04:05.000")))
	}
}

// check fails when a replica wrote a key it ran no loop for, and returns the writes.
func (j *journal) check(t *testing.T) []write {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	require.Empty(t, j.wrongful, "writes by a replica that did not own the key then")
	return slices.Clone(j.writes)
}

// creators returns who created the member ConfigMap ns/name in cluster, once per object made
// (by UID): an object deleted and made again counts twice.
func (j *journal) creators(cluster, ns, name string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	seen := map[types.UID]bool{}
	for _, w := range j.writes {
		if w.verb == "create" && (w.err == nil || w.landed) && w.cluster == cluster && w.resource == "configmaps" && w.key == (federation.Key{Namespace: ns, Name: name}) && !seen[w.uid] {
			seen[w.uid] = true
			out = append(out, w.who)
		}
	}
	return out
}

// recorder is a replica's connection to the host or a member: it records the writes, and
// refuses Lease calls while cut.
type recorder struct {
	federation.ClusterClient
	j       *journal
	r       *replica
	cluster string
	cut     atomic.Bool
}

// keyOf is the key a write belongs to: the object's own, or for sync's ControllerRevisions
// (named <federated name>-<hash>) the federated object's.
func keyOf(gvr schema.GroupVersionResource, ns, name string) federation.Key {
	if gvr.Resource == controllerRevs {
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
	}
	return federation.Key{Namespace: ns, Name: name}
}

// do makes a write through fn and records it. Some writes belong to no one key and are not
// checked against the owner: the elections' own, events (which the broadcaster sends after
// the fact), sync's finalizer on a Cluster and the member Namespace sync creates for its
// objects (the Syncer of every shard does both before its first object there).
//
// A create that fails with an error other than AlreadyExists or NotFound (a missing
// namespace) may still have made the object: a replica that loses its shard cancels the pass
// while its create is on the wire. When the object exists afterwards the create is recorded
// as landed. Every create that made or found an object records its UID: a retry after a
// create that timed out but landed also fails and finds the object, and it is the same
// object, not a second create (CI saw such a pair counted as two creates by one leader).
func (c *recorder) do(verb string, gvr schema.GroupVersionResource, ns, name string, fn func() error) error {
	if gvr == leases {
		if c.cut.Load() {
			return fmt.Errorf("%w: connection refused (test partition)", federation.ErrUnreachable)
		}
		return fn()
	}
	if gvr == events || (gvr == federation.ClusterGVR && verb == "patch") || gvr == namespaces {
		return fn()
	}
	key := keyOf(gvr, ns, name)
	owns := c.r.owns(key)
	start := time.Now()
	err := fn()
	w := write{who: c.r.name, cluster: c.cluster, verb: verb, resource: gvr.Resource, key: key, start: start, end: time.Now(), err: err}
	if verb == "create" && (err == nil || !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err)) {
		if u, gerr := c.ClusterClient.Get(context.Background(), gvr, ns, name); gerr == nil {
			w.landed, w.uid = err != nil, u.GetUID()
		}
	}
	c.j.record(w, owns)
	return err
}

func (c *recorder) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if gvr == leases && c.cut.Load() {
		return nil, fmt.Errorf("%w: connection refused (test partition)", federation.ErrUnreachable)
	}
	return c.ClusterClient.Get(ctx, gvr, ns, name)
}

func (c *recorder) Create(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (out *unstructured.Unstructured, err error) {
	err = c.do("create", gvr, u.GetNamespace(), u.GetName(), func() error { out, err = c.ClusterClient.Create(ctx, gvr, u); return err })
	return out, err
}

func (c *recorder) Update(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (out *unstructured.Unstructured, err error) {
	err = c.do("update", gvr, u.GetNamespace(), u.GetName(), func() error { out, err = c.ClusterClient.Update(ctx, gvr, u); return err })
	return out, err
}

func (c *recorder) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (out *unstructured.Unstructured, err error) {
	err = c.do("update-status", gvr, u.GetNamespace(), u.GetName(), func() error { out, err = c.ClusterClient.UpdateStatus(ctx, gvr, u); return err })
	return out, err
}

func (c *recorder) Patch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte) (out *unstructured.Unstructured, err error) {
	err = c.do("patch", gvr, ns, name, func() error { out, err = c.ClusterClient.Patch(ctx, gvr, ns, name, pt, data); return err })
	return out, err
}

func (c *recorder) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	return c.do("delete", gvr, ns, name, func() error { return c.ClusterClient.Delete(ctx, gvr, ns, name, opts) })
}

// recordingSet is a replica's ClusterSet: member clients record their writes; the member
// caches and Run are the ClusterSet's own.
type recordingSet struct {
	*kube.ClusterSet
	j *journal
	r *replica
}

func (s recordingSet) Client(name string) (federation.ClusterClient, error) {
	c, err := s.ClusterSet.Client(name)
	if err != nil {
		return nil, err
	}
	return &recorder{ClusterClient: c, j: s.j, r: s.r, cluster: name}, nil
}

// federateConfigMaps creates FederatedConfigMaps ns/name placed on both members, data
// {value: v1}.
func federateConfigMaps(t *testing.T, host *kube.Client, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		fedtest.Create(t, host, fedConfigMaps, fmt.Sprintf(`
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedConfigMap
metadata: {name: %s, namespace: %s}
spec:
  template: {data: {value: v1}}
  placement: {clusters: [{name: m1}, {name: m2}]}
`, name, ns))
	}
}

// waitPropagated waits until both members hold every ConfigMap ns/name with data.value want.
func waitPropagated(t *testing.T, members map[string]*kube.Client, ns, want string, names ...string) {
	t.Helper()
	fedtest.Eventually(t, fmt.Sprintf("%d ConfigMaps propagated with value %s", len(names), want), func() bool {
		for _, m := range memberNames {
			for _, name := range names {
				u, err := members[m].Get(context.Background(), configMaps, ns, name)
				if err != nil {
					return false
				}
				if v, _, _ := unstructured.NestedString(u.Object, "data", "value"); v != want {
					return false
				}
			}
		}
		return true
	})
}

// waitRecorded waits until the journal holds the creates of the member ConfigMaps ns/name: a
// create lands on the member before the recorder's call returns and records it.
func waitRecorded(t *testing.T, j *journal, ns string, names ...string) {
	t.Helper()
	missing := func() []string {
		var out []string
		for _, m := range memberNames {
			for _, name := range names {
				if len(j.creators(m, ns, name)) == 0 {
					out = append(out, m+"/"+name)
				}
			}
		}
		return out
	}
	if assert.Eventually(t, func() bool { return len(missing()) == 0 }, 90*time.Second, 50*time.Millisecond) {
		return
	}
	t.Fatalf("no create recorded for %v; the creates of them that failed: %v", missing(), j.failedCreates(ns))
}

// failedCreates lists the creates in ns that returned an error, with the error.
func (j *journal) failedCreates(ns string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, w := range j.writes {
		if w.verb == "create" && w.err != nil && w.key.Namespace == ns {
			out = append(out, fmt.Sprintf("%s %s %s in %s: %v", w.who, w.resource, w.key.Name, w.cluster, w.err))
		}
	}
	return out
}

// names returns prefix-from to prefix-(from+n-1).
func names(prefix string, from, n int) []string {
	var out []string
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// waitReal polls cond every 5ms on the real clock (elections run on it) and returns how long
// it took to hold.
func waitReal(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	require.Eventually(t, cond, settle, 5*time.Millisecond, what)
	return time.Since(start)
}
