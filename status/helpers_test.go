package status_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/status"
)

var (
	ctx    = context.Background()
	key    = federation.Key{Namespace: "default", Name: "web"}
	fedGVR = federation.DeploymentType.FederatedGVR()
	depGVR = federation.DeploymentType.TargetGVR()
)

// newHost returns a fake host serving fedkit's CRDs, with no action recorded yet.
func newHost(t testing.TB) *fake.Cluster {
	t.Helper()
	host := fake.NewHost("host")
	host.ClearActions()
	return host
}

// liveSet hides a fleet's optional capabilities (member caches), so the Collector reads
// members live, with the failures a partition causes.
type liveSet struct{ set federation.ClusterSet }

func (l liveSet) Client(name string) (federation.ClusterClient, error) { return l.set.Client(name) }

// env is a host, a fleet of three members running simulated apps controllers, and a
// Collector over live reads, all on one fake clock.
type env struct {
	host  *fake.Cluster
	fleet *fake.Fleet
	clock *clocktesting.FakeClock
	c     *status.Collector
}

func newEnv(t testing.TB, opts status.Options, names ...string) *env {
	t.Helper()
	if len(names) == 0 {
		names = []string{"a", "b", "c"}
	}
	o := fedtest.Options{Now: t0, Workloads: fake.Workloads{Apps: true}}
	for _, n := range names {
		o.Members = append(o.Members, fedtest.Member{Name: n})
	}
	f := fedtest.New(t, o)
	f.Host.ClearActions()
	e := &env{host: f.Host, fleet: f.Fleet, clock: f.Clock}
	opts.Clock = e.clock
	c, err := status.New(e.host, liveSet{e.fleet}, federation.DeploymentType, opts)
	require.NoError(t, err)
	e.c = c
	return e
}

// federate creates the FederatedDeployment default/web with, as sync would have written
// them, generation 1 propagated at revision 1 and its status.clusters entries and member Deployments with replicas[i] replicas in
// clusters[i]. The object is seeded whole, so a running Collector sees it with its entries.
func (e *env) federate(t testing.TB, clusters []string, replicas []int64) {
	t.Helper()
	entries := make([]any, 0, len(clusters))
	for _, name := range clusters {
		entries = append(entries, map[string]any{"name": name, "revision": int64(1)})
	}
	for i, name := range clusters {
		e.member(t, name, replicas[i])
	}
	e.fleet.Tick()
	require.NoError(t, e.host.Seed(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fedGVR.GroupVersion().String(), "kind": federation.DeploymentType.Federated.Kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "generation": int64(1)},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"replicas": int64(3)}}},
		"status": map[string]any{"clusters": entries, "observedGeneration": int64(1), "syncedRevision": int64(1),
			"conditions": []any{map[string]any{"type": federation.ConditionPropagated, "status": "True", "reason": "Propagated",
				"message": "revision 1 runs everywhere", "observedGeneration": int64(1), "lastTransitionTime": "2026-11-30T12:00:00Z"}}},
	}}))
}

// list writes status.clusters as sync would: one entry per cluster, with sync's fields.
func (e *env) list(t testing.TB, u *unstructured.Unstructured, clusters []string) {
	t.Helper()
	if u == nil {
		var err error
		u, err = e.host.Peek(fedGVR, key.Namespace, key.Name)
		require.NoError(t, err)
	}
	old, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
	entries := make([]any, 0, len(clusters))
	for _, name := range clusters {
		entry := map[string]any{"name": name, "revision": int64(1)}
		for _, o := range old {
			if m := o.(map[string]any); m["name"] == name {
				entry = m
			}
		}
		entries = append(entries, entry)
	}
	require.NoError(t, unstructured.SetNestedSlice(u.Object, entries, "status", "clusters"))
	_, err := e.host.UpdateStatus(ctx, fedGVR, u)
	require.NoError(t, err)
}

// member creates or scales the member Deployment in cluster, labelled as sync labels it.
func (e *env) member(t testing.TB, cluster string, replicas int64) {
	t.Helper()
	m, _ := e.fleet.Member(cluster)
	obj, err := m.Peek(depGVR, key.Namespace, key.Name)
	if apierrors.IsNotFound(err) {
		require.NoError(t, m.Seed(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "labels": map[string]any{
				federation.ManagedByLabel: federation.ManagedByValue, federation.FederatedNameLabel: key.Name,
				federation.FederatedNamespaceLabel: key.Namespace},
				"annotations": map[string]any{federation.RevisionAnnotation: "1"}},
			"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}},
		}}))
		return
	}
	require.NoError(t, err)
	require.NoError(t, m.Drift(depGVR, obj.GetNamespace(), obj.GetName(), func(o *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(o.Object, replicas, "spec", "replicas")
	}))
}

// get returns the federated object's status.
func (e *env) get(t testing.TB) *federation.FederatedObject {
	t.Helper()
	u, err := e.host.Peek(fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	fed, err := federation.FederatedObjectFromUnstructured(u)
	require.NoError(t, err)
	return fed
}

// reconcile runs one Collector pass and requires it to succeed.
func (e *env) reconcile(t testing.TB) federation.Result {
	t.Helper()
	res, err := e.c.Reconcile(ctx, key)
	require.NoError(t, err)
	return res
}

// writes counts the status writes to the host since the last call.
func (e *env) writes() int {
	n := 0
	for _, a := range e.host.Actions() {
		if a.Verb == fake.VerbUpdateStatus || a.Verb == fake.VerbUpdate || a.Verb == fake.VerbPatch || a.Verb == fake.VerbCreate {
			n++
		}
	}
	e.host.ClearActions()
	return n
}

// setClusterReady rewrites a Cluster's Ready condition on the host, as the monitor would.
func (e *env) setClusterReady(t testing.TB, name string, ready bool) {
	t.Helper()
	u, err := e.host.Peek(federation.ClusterGVR, "", name)
	require.NoError(t, err)
	c, err := federation.ClusterFromUnstructured(u)
	require.NoError(t, err)
	cond := metav1.Condition{Type: federation.ConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady",
		LastTransitionTime: metav1.NewTime(e.clock.Now())}
	if !ready {
		cond.Status, cond.Reason = metav1.ConditionFalse, "ClusterUnreachable"
	}
	c.Status.Conditions = []metav1.Condition{cond}
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c.Status)
	require.NoError(t, err)
	u.Object["status"] = st
	_, err = e.host.UpdateStatus(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
}

// sameTime compares API times by instant: they come back from JSON in the local zone.
var sameTime = cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })

// requireAt requires got to be the instant want.
func requireAt(t testing.TB, want time.Time, got *metav1.Time, msgAndArgs ...any) {
	t.Helper()
	require.NotNil(t, got, msgAndArgs...)
	require.True(t, got.Time.Equal(want), append([]any{"got %s, want %s ", got.Time.UTC(), want.UTC()}, msgAndArgs...)...)
}

// step moves the fake clock and runs the members' simulated controllers.
func (e *env) step(d time.Duration) {
	e.clock.Step(d)
	e.fleet.Tick()
}
