package sync_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	fedsync "github.com/fedkit/fedkit/sync"
)

// TestPropagationLag: fedkit_propagation_lag_seconds measures, on the Syncer's clock, from the
// pass that first sees a new generation to the pass that finds its revision in every placed
// cluster; passes in between, and passes after, add nothing.
func TestPropagationLag(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t) // created everywhere in the pass that saw it: a lag of 0
	e.reconcile(t) // nothing new: not measured again

	// A new image while azure is cut off: the change waits 90s for it.
	e.edit(t, setImage("nginx:1.22"))
	require.NoError(t, e.fleet.Partition("azure"))
	_, err := e.s.Reconcile(ctx, key)
	require.Error(t, err)
	e.clock.Step(30 * time.Second)
	_, err = e.s.Reconcile(ctx, key)
	require.Error(t, err)
	e.clock.Step(60 * time.Second)
	require.NoError(t, e.fleet.Heal("azure"))
	e.converge(t, 3)

	want := `
# HELP fedkit_propagation_lag_seconds Time from sync first seeing a change of a federated object (a new generation) to the pass that finds its revision in every placed cluster, by federated type. Measured by sync on its clock; member rollouts (pods becoming ready) are not included.
# TYPE fedkit_propagation_lag_seconds histogram
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="0.1"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="0.25"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="0.5"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="1"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="2.5"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="5"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="10"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="30"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="60"} 1
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="120"} 2
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="300"} 2
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="600"} 2
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="1800"} 2
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="3600"} 2
fedkit_propagation_lag_seconds_bucket{type="FederatedDeployment",le="+Inf"} 2
fedkit_propagation_lag_seconds_sum{type="FederatedDeployment"} 90
fedkit_propagation_lag_seconds_count{type="FederatedDeployment"} 2
`
	require.NoError(t, testutil.GatherAndCompare(e.reg, strings.NewReader(want), "fedkit_propagation_lag_seconds"))

	// A Syncer that starts on an object already propagated (a restart) measures nothing.
	restarted, err := fedsync.New(e.host, e.fleet, e.typ, fedsync.Options{Clock: e.clock, Registerer: e.reg})
	require.NoError(t, err)
	_, err = restarted.Reconcile(ctx, key)
	require.NoError(t, err)
	require.NoError(t, testutil.GatherAndCompare(e.reg, strings.NewReader(want), "fedkit_propagation_lag_seconds"))
}

// TestMemberRequestsAreCounted: every write to a member is counted per cluster, verb and
// result, and a cluster that leaves the federation loses its series.
func TestMemberRequestsAreCounted(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	e.reconcile(t)
	e.edit(t, setImage("nginx:1.22"))
	require.NoError(t, e.fleet.Partition("azure"))
	_, err := e.s.Reconcile(ctx, key)
	require.Error(t, err)

	got := memberCounts(t, e)
	// Labels in name order: cluster, loop, result, verb. In each cluster the first create
	// meets a missing namespace, sync creates it, and the object's create succeeds; the
	// update then reaches aws and gcp, not azure.
	require.Equal(t, map[string]float64{
		"aws sync not_found create": 1, "azure sync not_found create": 1, "gcp sync not_found create": 1,
		"aws sync ok create": 2, "azure sync ok create": 2, "gcp sync ok create": 2,
		"aws sync ok update": 1, "gcp sync ok update": 1, "azure sync unreachable update": 1,
	}, got)

	// azure leaves: its object is orphaned, the Cluster released, and once it is gone its
	// series go.
	require.NoError(t, e.fleet.Heal("azure"))
	e.leave(t, "azure")
	e.reconcile(t)
	for range 2 {
		_, err = e.s.ReconcileCluster(ctx, federation.Key{Name: "azure"})
		require.NoError(t, err)
	}
	require.True(t, e.clusterGone(t, "azure"))
	for series := range memberCounts(t, e) {
		require.NotContains(t, series, "azure", "azure's series are gone")
	}
}

// memberCounts returns fedkit_member_requests_total by its label values in name order
// (cluster, loop, result, verb), joined with spaces.
func memberCounts(t *testing.T, e *env) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	mfs, err := e.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "fedkit_member_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var parts []string
			for _, l := range m.GetLabel() {
				parts = append(parts, l.GetValue())
			}
			got[strings.Join(parts, " ")] = m.GetCounter().GetValue()
		}
	}
	return got
}

// TestReconcileLogsWithContext: nested calls of a pass log through the context's logger,
// with the loop, the type, the object and the revision.
func TestReconcileLogsWithContext(t *testing.T) {
	e := newEnv(t, fedsync.Options{})
	e.apply(t, e.typ.FederatedGVR(), frontend)
	var (
		mu    sync.Mutex
		lines []string
	)
	log := funcr.New(func(_, args string) {
		mu.Lock() // a pass writes to its clusters in parallel
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{Verbosity: 1})
	_, err := e.s.Reconcile(logr.NewContext(ctx, log), key)
	require.NoError(t, err)
	created := 0
	for _, l := range lines {
		if !strings.Contains(l, "Created a member namespace") {
			continue
		}
		created++
		for _, want := range []string{`"loop"="sync"`, `"type"="FederatedDeployment"`, `"object"="production/app-frontend"`, `"revision"=1`, `"cluster"=`} {
			require.Contains(t, l, want)
		}
	}
	require.Equal(t, 3, created, "one member namespace per cluster: %v", lines)
}

// A pass reports its member writes in one event per reason, naming every cluster: each event is
// a host write, and one per member write made them most of sync's host writes.
func TestOneEventPerReasonPerPass(t *testing.T) {
	tests := []struct {
		name string
		// before runs after the first pass and before the pass whose events are checked.
		before func(t *testing.T, e *env)
		want   []string
	}{
		{
			name: "create in every cluster",
			want: []string{"Normal CreatedInCluster created Deployment in 3 clusters: aws, azure, gcp"},
		},
		{
			name:   "template change",
			before: func(t *testing.T, e *env) { e.edit(t, setImage("nginx:1.22")) },
			want:   []string{"Normal UpdatedInCluster updated Deployment in 3 clusters: aws, azure, gcp"},
		},
		{
			name: "drift in two clusters",
			before: func(t *testing.T, e *env) {
				for _, c := range []string{"gcp", "aws"} {
					require.NoError(t, e.cluster(t, c).Drift(deployments, key.Namespace, key.Name, func(u *unstructured.Unstructured) {
						setMemberImage(u, "evil:latest")
					}))
				}
			},
			want: []string{"Normal DriftCorrected corrected drift of Deployment in 2 clusters: aws (/spec/template/spec/containers/0/image), gcp (/spec/template/spec/containers/0/image)"},
		},
		{
			name: "one cluster deleted out of band",
			before: func(t *testing.T, e *env) {
				require.NoError(t, e.cluster(t, "azure").Delete(ctx, deployments, key.Namespace, key.Name, deleteOpts()))
			},
			want: []string{"Normal CreatedInCluster created Deployment in 1 cluster: azure"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fedsync.Options{})
			e.apply(t, e.typ.FederatedGVR(), frontend)
			if tc.before != nil {
				e.reconcile(t)
				tc.before(t, e)
			}
			before := len(e.events.list())
			e.reconcile(t)
			if diff := cmp.Diff(tc.want, e.events.list()[before:]); diff != "" {
				t.Errorf("events of the pass (-want +got):\n%s", diff)
			}
		})
	}
}
