package status_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// TestMonitorFailoverStages: the Failover condition and one event per transition (a stage
// that changes with Ready is told in the Ready event): not Ready is
// NoSchedule (no new placements, with when NoExecute comes), then NoExecute after
// EvictionDelay, then Recovered once Ready holds again. A healthy cluster has no Failover
// condition, and a probe that changes no stage writes and records nothing.
func TestMonitorFailoverStages(t *testing.T) {
	rec := &fake.Recorder{}
	e := newMonitorEnv(t, status.MonitorOptions{Period: time.Minute, FailureThreshold: 1, Events: rec}, "eu")
	e.probe(t, "eu")
	require.Equal(t, metav1.Condition{}, conditionOf(e.cluster(t, "eu"), federation.ConditionFailover), "a healthy cluster has none")
	rec.Reset()

	stage := func(status metav1.ConditionStatus, reason, message string, since time.Time, events ...string) {
		t.Helper()
		c := conditionOf(e.cluster(t, "eu"), federation.ConditionFailover)
		require.Equal(t, status, c.Status)
		require.Equal(t, reason, c.Reason)
		require.Equal(t, message, c.Message)
		requireAt(t, since, &c.LastTransitionTime)
		if diff := cmp.Diff(events, eventStrings(rec)); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	}
	const on = "Cluster eu "

	require.NoError(t, e.fleet.Partition("eu"))
	e.clock.Step(time.Minute)
	e.probe(t, "eu")
	cut := t0.Add(time.Minute)
	noSchedule := "not Ready since 2026-11-30T12:01:00Z: taint federation.k8s.io/not-ready:NoSchedule, no new placements, the replicas running here stay; NoExecute (eviction) at 2026-11-30T12:06:00Z unless Ready again"
	ready := conditionOf(e.cluster(t, "eu"), federation.ConditionReady)
	stage(metav1.ConditionTrue, status.ReasonFailoverNoSchedule, noSchedule, cut,
		"Warning "+on+ready.Reason+": "+ready.Message+"; Failover NoSchedule: "+noSchedule)

	e.clock.Step(4 * time.Minute)
	_, writes := e.probe(t, "eu")
	require.Empty(t, writes, "nothing changes within the stage")
	stage(metav1.ConditionTrue, status.ReasonFailoverNoSchedule, noSchedule, cut)

	e.clock.Step(time.Minute)
	e.probe(t, "eu")
	noExecute := "not Ready since 2026-11-30T12:01:00Z: taint federation.k8s.io/not-ready:NoExecute since 2026-11-30T12:06:00Z, placements that do not tolerate it lose their replicas here (tolerationSeconds counts from then)"
	stage(metav1.ConditionTrue, status.ReasonFailoverNoExecute, noExecute, t0.Add(6*time.Minute),
		"Warning "+on+status.ReasonFailoverNoExecute+": "+noExecute)

	require.NoError(t, e.fleet.Heal("eu"))
	for range status.DefaultSuccessThreshold {
		e.clock.Step(time.Minute)
		e.probe(t, "eu")
	}
	back := t0.Add(9 * time.Minute)
	recovered := "Ready again since 2026-11-30T12:09:00Z; the monitor's taints are removed, placements may choose the cluster again"
	ready = conditionOf(e.cluster(t, "eu"), federation.ConditionReady)
	stage(metav1.ConditionFalse, status.ReasonFailoverRecovered, recovered, back,
		"Normal "+on+ready.Reason+": "+ready.Message+"; Failover Recovered: "+recovered)
	require.Empty(t, e.cluster(t, "eu").Spec.Taints)
}
