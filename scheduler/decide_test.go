package scheduler_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// inputFrom reads web's Decide input from the host: the plain values Reconcile reads.
func (e *env) inputFrom(t *testing.T) scheduler.Input {
	t.Helper()
	fed := e.get(t)
	in := scheduler.Input{Type: federation.DeploymentType, Object: fed, Previous: fed.Status.Schedule, Now: e.clock.Now()}
	u, err := e.host.Get(ctx, federation.ReplicaSchedulingPreferenceGVR, web.Namespace, web.Name)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatal(err)
	default:
		in.Preference, err = federation.ReplicaSchedulingPreferenceFromUnstructured(u)
		require.NoError(t, err)
	}
	list, err := e.host.List(ctx, federation.ClusterGVR, "", metav1.ListOptions{})
	require.NoError(t, err)
	for i := range list.Items {
		c, err := federation.ClusterFromUnstructured(&list.Items[i])
		require.NoError(t, err)
		in.Clusters = append(in.Clusters, *c)
	}
	return in
}

// placedOn is web on the given placement (YAML), 6 replicas of 500m CPU each.
func placedOn(placement string) string {
	return `
apiVersion: types.federation.k8s.io/v1alpha1
kind: FederatedDeployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      replicas: 6
      template: {spec: {containers: [{name: app, image: "app:1", resources: {requests: {cpu: 500m}}}]}}
  placement: ` + placement + `
`
}

func preference(spec string) string {
	return `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: ` + spec + `
`
}

// TestDecideAgreesWithReconcile: for every case, Decide on the plain values read from the host
// gives the schedule, the Scheduled condition, the requeue and the error class that Reconcile
// then writes and returns. setup may reconcile first (to leave a previous schedule) and then
// change the fleet or step the clock.
func TestDecideAgreesWithReconcile(t *testing.T) {
	all := `{clusters: [{name: aws}, {name: gcp}, {name: azure}]}`
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *env)
		// want is what Decide must say, so a case cannot agree vacuously.
		wantReason   string
		wantSchedule map[string]int64
	}{
		{name: "no preference duplicates", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(all))
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 6, "gcp": 6, "azure": 6}},
		{name: "preference ignores the placement's clusters", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(`{clusters: [{name: aws}, {name: gcp}]}`))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}, aws: {minReplicas: 2, maxReplicas: 6, weight: 2}}}`))
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 5, "gcp": 2, "azure": 2}},
		{name: "preference intersected with the placement", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(`{clusters: [{name: aws}, {name: gcp}]}`))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 9, intersectWithClusterSelector: true, clusters: {"*": {weight: 1}, aws: {minReplicas: 2, maxReplicas: 6, weight: 2}}}`))
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 6, "gcp": 3}},
		{name: "defaulted minReplicas", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(all))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 3, clusters: {"*": {weight: 1}, aws: {weight: 20}}}`))
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 1, "gcp": 1, "azure": 1}},
		{name: "capacity is headroom plus running replicas", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(all))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}`))
			e.setAvailable(t, "aws", map[string]string{"cpu": "500m"}) // one more replica fits
			e.setMembers(t, map[string]int64{"aws": 1})                // and one runs there
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 2, "gcp": 4, "azure": 3}},
		{name: "capacity too small", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(`{clusters: [{name: aws}]}`))
			e.setAvailable(t, "aws", map[string]string{"cpu": "1"})
		}, wantReason: scheduler.ReasonUnschedulable, wantSchedule: map[string]int64{"aws": 2}},
		{name: "unknown cluster name", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(`{clusters: [{name: aws}, {name: gpc}]}`))
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 6}},
		{name: "cluster not ready", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(all))
			e.setReady(t, "azure", "False")
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 6, "gcp": 6}},
		{name: "preference for another kind is ignored", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(`{clusters: [{name: aws}]}`))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedStatefulSet, totalReplicas: -1}`))
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 6}},
		{name: "invalid preference", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(all))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 9, clusters: {aws: {minReplicas: 5, maxReplicas: 2}}}`))
		}, wantReason: scheduler.ReasonInvalidPreference},
		{name: "invalid placement", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(`{clusters: [{name: aws}, {name: aws}]}`))
		}, wantReason: scheduler.ReasonInvalidPlacement},
		{name: "invalid template", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), webDeployment("-1"))
		}, wantReason: scheduler.ReasonInvalidObject},
		{name: "unsatisfiable spread", setup: func(t *testing.T, e *env) {
			e.apply(t, federation.DeploymentType.FederatedGVR(), spreadDeployment(`[{topologyKey: region, minGroups: 4}]`))
		}, wantReason: scheduler.ReasonUnsatisfiable, wantSchedule: map[string]int64{"aws": 1, "gcp": 1, "azure": 1}},
		{name: "refill not due yet", setup: func(t *testing.T, e *env) {
			e.setReady(t, "azure", "False")
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(all))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}`))
			_, err := e.s.Reconcile(ctx, web)
			require.NoError(t, err)
			e.setReady(t, "azure", "True")
			e.clock.Step(time.Minute)
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 4, "gcp": 4, "azure": 1}},
		{name: "refill due", setup: func(t *testing.T, e *env) {
			e.setReady(t, "azure", "False")
			e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(all))
			e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}`))
			_, err := e.s.Reconcile(ctx, web)
			require.NoError(t, err)
			e.setReady(t, "azure", "True")
			e.clock.Step(6 * time.Minute)
		}, wantReason: scheduler.ReasonScheduled, wantSchedule: map[string]int64{"aws": 3, "gcp": 3, "azure": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, federation.DeploymentType)
			tc.setup(t, e)
			in := e.inputFrom(t)
			before := in.Object.Status.Schedule
			d, derr := scheduler.Decide(in)
			require.Equal(t, tc.wantReason, d.Condition.Reason, "Decide: %v; %s", derr, d.Condition.Message)
			if tc.wantSchedule != nil {
				require.NotNil(t, d.Schedule)
				require.Equal(t, tc.wantSchedule, schedule(&federation.FederatedObject{Status: federation.FederatedStatus{Schedule: d.Schedule}}), d.Message)
			}

			res, rerr := e.s.Reconcile(ctx, web)
			obj := e.get(t)
			wantSchedule := d.Schedule
			if wantSchedule == nil {
				wantSchedule = before // invalid input: the last good schedule stays
			}
			if diff := cmp.Diff(wantSchedule, obj.Status.Schedule); diff != "" {
				t.Errorf("status.schedule (-Decide +Reconcile):\n%s", diff)
			}
			if diff := cmp.Diff(d.Condition, scheduled(obj), cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("Scheduled condition (-Decide +Reconcile):\n%s", diff)
			}
			// Invalid input is terminal for Reconcile; an unsatisfiable spread is written.
			require.Equal(t, d.Schedule == nil, federation.IsTerminal(rerr), "Decide: %v; Reconcile: %v", derr, rerr)
			if rerr == nil {
				require.Equal(t, d.RequeueAfter, res.RequeueAfter)
			}
		})
	}
}

// TestDecideFresh: a fresh decision ignores the previous schedule (replicas that stay put
// until the next refill move to their share at once) but still counts the replicas the
// object runs towards their cluster's capacity. ExplainFresh is that decision on the host's
// objects; Explain is the loop's.
func TestDecideFresh(t *testing.T) {
	e := newEnv(t, federation.DeploymentType)
	e.setReady(t, "azure", "False")
	e.apply(t, federation.DeploymentType.FederatedGVR(), placedOn(`{clusters: [{name: aws}, {name: gcp}, {name: azure}]}`))
	e.apply(t, federation.ReplicaSchedulingPreferenceGVR, preference(`{targetKind: FederatedDeployment, totalReplicas: 9, clusters: {"*": {weight: 1}}}`))
	_, err := e.s.Reconcile(ctx, web)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"aws": 4, "gcp": 5}, schedule(e.get(t)))
	e.setReady(t, "azure", "True")
	// gcp is full: no headroom left, and the 5 replicas it runs are all it holds. Without
	// them counted, a fresh decision would put nothing there.
	e.setAvailable(t, "gcp", map[string]string{"cpu": "0"})
	e.setMembers(t, map[string]int64{"aws": 4, "gcp": 5})
	e.clock.Step(time.Minute)

	in := e.inputFrom(t)
	loop, err := scheduler.Decide(in)
	require.NoError(t, err)
	in.Fresh = true
	fresh, err := scheduler.Decide(in)
	require.NoError(t, err)
	asMap := func(s *federation.Schedule) map[string]int64 {
		return schedule(&federation.FederatedObject{Status: federation.FederatedStatus{Schedule: s}})
	}
	require.Equal(t, map[string]int64{"aws": 4, "gcp": 4, "azure": 1}, asMap(loop.Schedule), "the loop keeps running replicas until the refill: %s", loop.Message)
	require.Equal(t, map[string]int64{"aws": 3, "gcp": 3, "azure": 3}, asMap(fresh.Schedule), "fresh: the division by weight: %s", fresh.Message)
	require.Equal(t, metav1.NewTime(now.Add(time.Minute)), *fresh.Schedule.LastRebalanceTime, "a fresh schedule starts its rebalance period now")

	why, err := e.s.Explain(ctx, web)
	require.NoError(t, err)
	require.Equal(t, *loop.Schedule, why.Schedule)
	whyNow, err := e.s.ExplainFresh(ctx, web)
	require.NoError(t, err)
	require.Equal(t, *fresh.Schedule, whyNow.Schedule)
	require.Equal(t, fresh.Plan.Explain("gcp"), whyNow.Plan.Explain("gcp"))
}
