package scheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// runFixture is a fake host with clusters Clusters and objects FederatedDeployments in
// namespace "default" (with a ReplicaSchedulingPreference each when rsps is set), and a
// running Scheduler whose reconciles are counted by its metrics.
type runFixture struct {
	host   *fake.Cluster
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
}

func newRunFixture(tb testing.TB, clusters, objects int, rsps bool) *runFixture {
	tb.Helper()
	host := fake.NewHost("host")
	fleet := fake.NewFleet()
	for i := range clusters {
		fleet.Add(fmt.Sprintf("c%03d", i), map[string]string{federation.RegionLabel: fmt.Sprintf("r%d", i%3)})
	}
	require.NoError(tb, fleet.Register(context.Background(), host))
	var seed []*unstructured.Unstructured
	for i := range objects {
		seed = append(seed, fromYAML(tb, fmt.Sprintf(`{apiVersion: types.federation.k8s.io/v1alpha1, kind: FederatedDeployment,
		  metadata: {name: app-%05d, namespace: default},
		  spec: {template: {spec: {replicas: 6}}, placement: {clusterSelector: {}}}}`, i)))
		if rsps {
			seed = append(seed, fromYAML(tb, fmt.Sprintf(`{apiVersion: core.federation.k8s.io/v1alpha1, kind: ReplicaSchedulingPreference,
			  metadata: {name: app-%05d, namespace: default},
			  spec: {targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}}`, i)))
		}
	}
	require.NoError(tb, host.Seed(seed...))
	return &runFixture{host: host, reg: prometheus.NewRegistry()}
}

func fromYAML(tb testing.TB, doc string) *unstructured.Unstructured {
	tb.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(tb, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

// start runs a Scheduler on the fixture's host. Its clock is fake and never moves, so no
// RequeueAfter comes due: every reconcile is caused by a change.
func (f *runFixture) start(tb testing.TB) {
	tb.Helper()
	s, err := scheduler.New(f.host, federation.DeploymentType, scheduler.Options{
		Registerer: f.reg, Clock: clocktesting.NewFakeClock(now), Workers: 2,
	})
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.done = cancel, make(chan error, 1)
	go func() { f.done <- s.Run(ctx) }()
}

func (f *runFixture) stop(tb testing.TB) {
	tb.Helper()
	f.cancel()
	require.NoError(tb, <-f.done)
}

// reconciles returns the Scheduler's reconcile count.
func (f *runFixture) reconciles(tb testing.TB) int {
	tb.Helper()
	families, err := f.reg.Gather()
	require.NoError(tb, err)
	total := 0.0
	for _, fam := range families {
		if fam.GetName() == "fedkit_reconciles_total" {
			for _, m := range fam.GetMetric() {
				if isScheduler(m.GetLabel()) {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(total)
}

// waitReconciles waits until the Scheduler has reconciled at least n times.
func (f *runFixture) waitReconciles(tb testing.TB, n int) {
	tb.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(5 * time.Minute)
	for f.reconciles(tb) < n {
		if time.Now().After(deadline) {
			tb.Fatalf("%d reconciles after 5 minutes; want %d", f.reconciles(tb), n)
		}
		<-tick.C
	}
}

// calls counts the host's recorded actions by verb.
func (f *runFixture) calls() map[fake.Verb]int {
	out := map[fake.Verb]int{}
	for _, a := range f.host.Actions() {
		out[a.Verb]++
	}
	return out
}

// BenchmarkRunInitial measures the API calls per reconcile of Run's first pass over 50
// objects with preferences: each object is reconciled twice (its creation, then the event of
// its own status write).
func BenchmarkRunInitial(b *testing.B) {
	const objects = 50
	var reads, writes, reconciles int
	for b.Loop() {
		f := newRunFixture(b, 3, objects, true)
		f.start(b)
		f.waitReconciles(b, 2*objects)
		f.stop(b)
		c := f.calls()
		reads += c[fake.VerbGet] + c[fake.VerbList]
		writes += c[fake.VerbUpdateStatus] + c[fake.VerbUpdate] + c[fake.VerbPatch]
		reconciles += f.reconciles(b)
	}
	b.ReportMetric(float64(reads)/float64(reconciles), "reads/reconcile")
	b.ReportMetric(float64(writes)/float64(reconciles), "writes/reconcile")
}

// BenchmarkRunClusterChange measures how fast Run reschedules 10,000 objects after one
// Cluster's labels change (every object is reconciled; none changes), and the API calls it
// makes for that.
func BenchmarkRunClusterChange(b *testing.B) {
	const objects, clusters = 10000, 10
	f := newRunFixture(b, clusters, objects, false)
	f.start(b)
	defer f.stop(b)
	f.waitReconciles(b, 2*objects)
	before := f.calls()
	ctx := context.Background()
	start, begin := f.reconciles(b), time.Now()
	i := 0
	for b.Loop() {
		i++
		u, err := f.host.Get(ctx, federation.ClusterGVR, "", "c000")
		require.NoError(b, err)
		labels := u.GetLabels()
		labels["bench"] = fmt.Sprint(i)
		u.SetLabels(labels)
		_, err = f.host.Update(ctx, federation.ClusterGVR, u)
		require.NoError(b, err)
		f.waitReconciles(b, start+i*objects)
	}
	elapsed := time.Since(begin)
	after := f.calls()
	done := f.reconciles(b) - start
	reads := after[fake.VerbGet] + after[fake.VerbList] - before[fake.VerbGet] - before[fake.VerbList] - i // the benchmark's own Gets
	b.ReportMetric(float64(done)/elapsed.Seconds(), "reconciles/s")
	b.ReportMetric(float64(reads)/float64(done), "reads/reconcile")
}

// TestRunReadsFromCaches: Run's reconciles used to read the object, its preference and every
// Cluster from the API server (100 Gets of objects, 100 of preferences and 100 Lists of
// Clusters for 50 objects), though Run's informers hold all three. Now the only reads are
// the informers' own lists, and the writes are the 50 status updates.
func TestRunReadsFromCaches(t *testing.T) {
	const objects = 50
	f := newRunFixture(t, 3, objects, true)
	f.host.ClearActions()
	f.start(t)
	f.waitReconciles(t, 2*objects)
	f.stop(t)
	calls := f.calls()
	// A pass may read an informer's copy that is a write behind (another informer's event
	// arrived first): its status write then fails with a Conflict and is redone on a Get of
	// the object, so the writes are at least one per object, and there is one Get per
	// Conflict. The other reads are exact.
	if calls[fake.VerbUpdateStatus] < objects {
		t.Errorf("UpdateStatus calls = %d; want at least %d", calls[fake.VerbUpdateStatus], objects)
	}
	if calls[fake.VerbGet] > calls[fake.VerbUpdateStatus]-objects {
		t.Errorf("Get calls = %d; want at most one per conflicting write (%d)", calls[fake.VerbGet], calls[fake.VerbUpdateStatus]-objects)
	}
	delete(calls, fake.VerbUpdateStatus)
	delete(calls, fake.VerbGet)
	want := map[fake.Verb]int{
		fake.VerbList:  3, // one per informer: objects, preferences, Clusters
		fake.VerbWatch: 3,
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("API reads of Run (-want +got):\n%s", diff)
	}
}

// TestRunClusterChangeReadsNothing: a Cluster change brings back every object (a heartbeat
// used to cost one live List of every Cluster, plus a Get of the object and of its
// preference, per object). Now the passes it causes read only the informers: the API sees
// the test's own Get and Update of the Cluster and nothing else, no read and, as nothing
// changed for any object, no write.
func TestRunClusterChangeReadsNothing(t *testing.T) {
	const objects = 50
	f := newRunFixture(t, 3, objects, true)
	f.start(t)
	f.waitReconciles(t, 2*objects)
	before := f.reconciles(t)
	f.host.ClearActions()
	ctx := context.Background()
	u, err := f.host.Get(ctx, federation.ClusterGVR, "", "c000")
	require.NoError(t, err)
	u.SetLabels(map[string]string{federation.RegionLabel: "r0", "heartbeat": "1"})
	_, err = f.host.Update(ctx, federation.ClusterGVR, u)
	require.NoError(t, err)
	f.waitReconciles(t, before+objects)
	f.stop(t)
	want := map[fake.Verb]int{fake.VerbGet: 1, fake.VerbUpdate: 1} // the test's own
	if diff := cmp.Diff(want, f.calls()); diff != "" {
		t.Errorf("API calls after a Cluster change (-want +got):\n%s", diff)
	}
}

// unservedRSPs is a host that does not serve ReplicaSchedulingPreferences, as one without
// the CRD.
type unservedRSPs struct {
	*fake.Cluster
	refused *atomic.Int32 // Lists of ReplicaSchedulingPreferences refused so far
}

func (h unservedRSPs) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if gvr == federation.ReplicaSchedulingPreferenceGVR {
		h.refused.Add(1)
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	return h.Cluster.List(ctx, gvr, ns, o)
}

// TestRunFailsWithoutTheRSPResource: Run on a host without the ReplicaSchedulingPreference
// CRD used to wait forever, silently, and return nil when cancelled. Now it fails after
// CacheSyncTimeout, on its clock, naming the resource.
func TestRunFailsWithoutTheRSPResource(t *testing.T) {
	clk := clocktesting.NewFakeClock(now)
	host := unservedRSPs{Cluster: fake.NewHost("host"), refused: new(atomic.Int32)}
	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{Clock: clk, CacheSyncTimeout: time.Minute})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background()) }()
	var runErr error
	require.Eventually(t, func() bool {
		// Time passes only once the informer has been refused twice (its retry comes after
		// the first error was recorded): stepping the clock earlier could time the wait out
		// before any list error exists to report.
		if host.refused.Load() < 2 {
			return false
		}
		clk.Step(time.Minute)
		select {
		case runErr = <-done:
			return true
		default:
			return false
		}
	}, 10*time.Second, 10*time.Millisecond)
	require.ErrorContains(t, runErr, "replicaschedulingpreferences.core.federation.k8s.io")
	require.True(t, apierrors.IsNotFound(runErr), "the list error is kept: %v", runErr)
}
