package status_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// eventStrings renders a recorder's events and forgets them.
func eventStrings(r *fake.Recorder) []string {
	var out []string
	for _, e := range r.Events() {
		out = append(out, e.String())
	}
	r.Reset()
	return out
}

// TestCollectorEventsAndStaleMembers: the Collector records an event when Ready changes
// status or reason and when clusters go stale while it does not, never on a pass that only
// moves numbers; fedkit_status_stale_members counts the stale entries per cluster.
func TestCollectorEventsAndStaleMembers(t *testing.T) {
	rec := &fake.Recorder{}
	reg := prometheus.NewPedanticRegistry()
	e := newEnv(t, status.Options{Events: rec, Registerer: reg}, "a", "b", "c", "d", "e")
	e.federate(t, []string{"a", "b", "c", "d", "e"}, []int64{3, 3, 3, 3, 3})
	const obj = "FederatedDeployment default/web "
	pass := func(want ...string) {
		t.Helper()
		e.reconcile(t)
		if diff := cmp.Diff(want, eventStrings(rec)); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	}
	staleGauge := func(want string) {
		t.Helper()
		head := "# HELP fedkit_status_stale_members Federated objects whose entry for a cluster is stale (no fresh data within the Collector's StaleAfter), by federated type and cluster. A cluster's series goes when no entry of it is stale.\n# TYPE fedkit_status_stale_members gauge\n"
		if want == "" {
			require.Equal(t, 0, testutil.CollectAndCount(reg, "fedkit_status_stale_members"))
			return
		}
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(head+want), "fedkit_status_stale_members"))
	}

	pass("Normal " + obj + "Ready: ready in 5 of 5 placed clusters")
	e.member(t, "a", 4)
	e.step(30 * time.Second)
	pass() // new numbers, Ready unchanged: no event

	e.setClusterReady(t, "e", false)
	e.step(30 * time.Second)
	pass("Warning " + obj + "StaleClusters: ready in 4 of 5 placed clusters; no fresh data from: e")
	staleGauge(`fedkit_status_stale_members{cluster="e",type="FederatedDeployment"} 1` + "\n")
	e.step(30 * time.Second)
	pass() // still stale: nothing new

	e.setClusterReady(t, "d", false) // a second cluster goes stale; Ready keeps its reason
	e.step(30 * time.Second)
	pass("Warning " + obj + "ClustersStale: no fresh data from: d")
	staleGauge(`fedkit_status_stale_members{cluster="d",type="FederatedDeployment"} 1
fedkit_status_stale_members{cluster="e",type="FederatedDeployment"} 1
`)

	for _, n := range []string{"d", "e"} {
		e.setClusterReady(t, n, true)
	}
	e.step(30 * time.Second)
	pass("Normal " + obj + "Ready: ready in 5 of 5 placed clusters")
	staleGauge("")

	// An object that goes takes its stale entries with it.
	e.setClusterReady(t, "e", false)
	e.step(30 * time.Second)
	e.reconcile(t)
	staleGauge(`fedkit_status_stale_members{cluster="e",type="FederatedDeployment"} 1` + "\n")
	require.NoError(t, e.host.Delete(ctx, fedGVR, key.Namespace, key.Name, metav1.DeleteOptions{}))
	e.reconcile(t)
	staleGauge("")
}

// TestCollectorCountsLiveReads: live member reads are member requests, by cluster and result.
func TestCollectorCountsLiveReads(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e := newEnv(t, status.Options{Registerer: reg})
	e.federate(t, []string{"a", "b", "c"}, []int64{1, 1, 1})
	require.NoError(t, e.fleet.Partition("c"))
	e.reconcile(t)
	want := `
# HELP fedkit_member_requests_total Requests of a loop to a member cluster's API server, by loop, cluster, verb (get, list, create, update, patch, delete, watch, probe) and result (ok, not_found, already_exists, conflict, unreachable, error).
# TYPE fedkit_member_requests_total counter
fedkit_member_requests_total{cluster="a",loop="status",result="ok",verb="get"} 1
fedkit_member_requests_total{cluster="b",loop="status",result="ok",verb="get"} 1
fedkit_member_requests_total{cluster="c",loop="status",result="unreachable",verb="get"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "fedkit_member_requests_total"))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP fedkit_reconciles_total Passes of a loop over one key, by loop, type of object and outcome (written, unchanged, gone, invalid, conflict, error).
# TYPE fedkit_reconciles_total counter
fedkit_reconciles_total{loop="status",outcome="written",type="FederatedDeployment"} 1
`), "fedkit_reconciles_total"))
}

// TestMonitorEventsAndMetrics: the monitor records an event on a Cluster when Ready changes
// status, and none on probes that change nothing; its probes are member requests, its
// readiness a gauge; a deleted Cluster's series go.
func TestMonitorEventsAndMetrics(t *testing.T) {
	rec := &fake.Recorder{}
	reg := prometheus.NewPedanticRegistry()
	e := newMonitorEnv(t, status.MonitorOptions{Events: rec, Registerer: reg}, "eu")
	e.probe(t, "eu")
	require.Empty(t, eventStrings(rec), "Register wrote Ready=True already: no transition")
	require.NoError(t, e.fleet.Partition("eu"))
	for range 5 {
		e.clock.Step(10 * time.Second)
		e.probe(t, "eu")
	}
	got := eventStrings(rec)
	require.Len(t, got, 1, "one event for the transition, none for the probes around it: %v", got)
	require.True(t, strings.HasPrefix(got[0], "Warning Cluster eu ClusterUnreachable: "), got[0])
	require.Equal(t, 0.0, value(t, reg, "fedkit_cluster_ready", map[string]string{"cluster": "eu"}))

	require.NoError(t, e.fleet.Heal("eu"))
	for range status.DefaultSuccessThreshold {
		e.clock.Step(10 * time.Second)
		e.probe(t, "eu")
	}
	got = eventStrings(rec)
	require.Len(t, got, 1, "%v", got)
	require.True(t, strings.HasPrefix(got[0], "Normal Cluster eu ClusterReady: "), got[0])

	probes := func(result string) float64 {
		return value(t, reg, "fedkit_member_requests_total", map[string]string{"loop": "cluster-monitor", "cluster": "eu", "verb": "probe", "result": result})
	}
	require.Equal(t, 1.0+status.DefaultSuccessThreshold, probes("ok"))
	require.Equal(t, 5.0, probes("unreachable"))

	require.NoError(t, e.host.Delete(ctx, federation.ClusterGVR, "", "eu", metav1.DeleteOptions{}))
	e.probe(t, "eu")
	for _, name := range []string{"fedkit_member_requests_total", "fedkit_cluster_ready"} {
		require.Zero(t, testutil.CollectAndCount(reg, name), "%s keeps series of a deleted cluster", name)
	}
	require.Equal(t, 1.0, value(t, reg, "fedkit_reconciles_total", map[string]string{"loop": "cluster-monitor", "outcome": "gone", "type": "Cluster"}))
}

// value returns the value of the series of the family name whose labels include labels; it
// fails the test when there is none.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// TestReconcileLogsWithContext: every line a Collector pass logs names the loop, the type
// and the object, and the monitor's the loop and the cluster, nested calls included.
func TestReconcileLogsWithContext(t *testing.T) {
	lines := &logLines{}
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b", "c"}, []int64{1, 1, 1})
	require.NoError(t, e.fleet.Partition("c")) // a failed read is logged by a nested call
	_, err := e.c.Reconcile(lines.context(), key)
	require.NoError(t, err)
	lines.requireAll(t, `"loop"="status"`, `"type"="FederatedDeployment"`, `"object"="default/web"`)

	lines = &logLines{}
	m := newMonitorEnv(t, status.MonitorOptions{}, "eu")
	require.NoError(t, m.fleet.Partition("eu"))
	for range 3 {
		m.clock.Step(10 * time.Second)
		_, err := m.m.Reconcile(lines.context(), federation.Key{Name: "eu"})
		require.NoError(t, err)
	}
	lines.requireAll(t, `"loop"="cluster-monitor"`, `"cluster"="eu"`)
}

// logLines collects the lines of a V(1) funcr logger.
type logLines struct{ lines []string }

func (l *logLines) context() context.Context {
	return logrContext(func(args string) { l.lines = append(l.lines, args) })
}

func (l *logLines) requireAll(t *testing.T, want ...string) {
	t.Helper()
	require.NotEmpty(t, l.lines)
	for _, line := range l.lines {
		for _, w := range want {
			require.Contains(t, line, w)
		}
	}
}

func logrContext(emit func(args string)) context.Context {
	return logr.NewContext(ctx, funcr.New(func(_, args string) { emit(args) }, funcr.Options{Verbosity: 1}))
}
