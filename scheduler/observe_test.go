package scheduler_test

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// TestEventsOnTransitions: the scheduler records an event when a schedule changes and when
// an object turns unschedulable or invalid, and none on a pass that changed nothing.
func TestEventsOnTransitions(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	rec := &fake.Recorder{}
	reg := prometheus.NewPedanticRegistry()
	s, err := scheduler.New(e.host, federation.DeploymentType, scheduler.Options{Clock: e.clock, Events: rec, Registerer: reg})
	require.NoError(t, err)
	pass := func(wantEvents ...string) {
		t.Helper()
		rec.Reset()
		_, _ = s.Reconcile(ctx, key)
		var got []string
		for _, ev := range rec.Events() {
			got = append(got, ev.String())
		}
		if diff := cmp.Diff(wantEvents, got); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	}
	const obj = "FederatedDeployment production/app-frontend "

	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	pass("Normal " + obj + "ScheduleChanged: scheduled to aws (6), azure (6), gcp (6)")
	pass() // nothing changed: no event

	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, rsp)
	pass("Normal " + obj + "ScheduleChanged: scheduled to aws (5), azure (2), gcp (2); was aws (6), azure (6), gcp (6)")
	pass()

	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, strings.Replace(rsp, "aws: {minReplicas: 2, maxReplicas: 6, weight: 2}", "aws: {minReplicas: 4, maxReplicas: 2}", 1))
	pass("Warning " + obj + "InvalidPreference: ReplicaSchedulingPreference production/app-frontend is invalid: spec.clusters[aws].maxReplicas: Invalid value: 2: must not be less than minReplicas (4)")
	pass() // still invalid, nothing new: no event

	// Placed in a cluster that does not exist: nothing can be scheduled.
	require.NoError(t, e.host.Delete(ctx, federation.ReplicaSchedulingPreferenceGVR, key.Namespace, key.Name, metav1.DeleteOptions{}))
	e.apply(t, federation.DeploymentType.FederatedGVR(), strings.Replace(frontend, "clusters: [{name: aws}, {name: gcp}, {name: azure}]", "clusters: [{name: mars}]", 1))
	_, _ = s.Reconcile(ctx, key)
	got := rec.Events()
	require.Len(t, got, 2, "%v", got)
	require.Equal(t, "Normal "+obj+"ScheduleChanged: scheduled to no cluster; was aws (5), azure (2), gcp (2)", got[0].String())
	require.Equal(t, federation.EventTypeWarning, got[1].Type)
	require.Equal(t, scheduler.ReasonUnschedulable, got[1].Reason)
	pass()

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP fedkit_scheduler_schedule_changes_total Writes of a changed status.schedule (clusters or replicas), by federated type.
# TYPE fedkit_scheduler_schedule_changes_total counter
fedkit_scheduler_schedule_changes_total{type="FederatedDeployment"} 3
`), "fedkit_scheduler_schedule_changes_total"))
}

// TestReconcileLogsWithContext: every line a pass logs names the loop, the type and the
// object, nested calls included (they take the logger from the context).
func TestReconcileLogsWithContext(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	e.apply(t, federation.DeploymentType.FederatedGVR(), frontend)
	_, err := e.s.Reconcile(logr.NewContext(ctx, log), key)
	require.NoError(t, err)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		for _, want := range []string{`"loop"="scheduler"`, `"type"="FederatedDeployment"`, `"object"="production/app-frontend"`} {
			require.Contains(t, l, want)
		}
	}
}
