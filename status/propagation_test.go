package status_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// propagated is the Propagated condition sync writes for generation gen.
func propagated(s metav1.ConditionStatus, reason, message string, gen int64) metav1.Condition {
	return metav1.Condition{Type: federation.ConditionPropagated, Status: s, Reason: reason, Message: message,
		ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(t0)}
}

// running is a ready Deployment's observation with n replicas, carrying revision rev.
func running(n, rev int64) *status.Observation {
	o := deploy(n)
	o.Revision = rev
	return o
}

// TestAggregateReadyWaitsForPropagation: Ready=True with observedGeneration N says the members
// run generation N's revision. While sync has not propagated N (it has not passed over it, a
// member refused it, a staged rollout holds it), Ready
// is not True for N, however ready the members are with what they run.
func TestAggregateReadyWaitsForPropagation(t *testing.T) {
	now := t0.Add(time.Minute)
	at := func(name string, rev int64) federation.MemberStatus {
		e := entry(name, 3, t0, false)
		e.Revision = rev
		return e
	}
	tests := []struct {
		name     string
		st       federation.FederatedStatus
		members  []status.Member
		wantCond metav1.ConditionStatus
		reason   string
		message  string
	}{{
		name: "sync propagated generation 2 everywhere: True",
		st: federation.FederatedStatus{ObservedGeneration: 2, SyncedRevision: 4,
			Clusters:   []federation.MemberStatus{at("a", 4), at("b", 4)},
			Conditions: []metav1.Condition{propagated(metav1.ConditionTrue, "Propagated", "revision 4 runs in 2 cluster(s)", 2)}},
		members:  []status.Member{fresh(running(3, 4), now), fresh(running(3, 4), now)},
		wantCond: metav1.ConditionTrue, reason: status.ReasonReady, message: "ready in 2 of 2 placed clusters",
	}, {
		name: "sync has not passed over generation 2 yet: Unknown",
		st: federation.FederatedStatus{ObservedGeneration: 1, SyncedRevision: 3,
			Clusters:   []federation.MemberStatus{at("a", 3), at("b", 3)},
			Conditions: []metav1.Condition{propagated(metav1.ConditionTrue, "Propagated", "revision 3 runs in 2 cluster(s)", 1)}},
		members:  []status.Member{fresh(running(3, 3), now), fresh(running(3, 3), now)},
		wantCond: metav1.ConditionUnknown, reason: status.ReasonWaitingForPropagation,
		message: "sync has not propagated generation 2 yet (it last wrote status for generation 1)",
	}, {
		name: "no Propagated condition at all: Unknown",
		st: federation.FederatedStatus{
			Clusters: []federation.MemberStatus{at("a", 3), at("b", 3)}},
		members:  []status.Member{fresh(running(3, 3), now), fresh(running(3, 3), now)},
		wantCond: metav1.ConditionUnknown, reason: status.ReasonWaitingForPropagation,
		message: "sync has not propagated generation 2 yet (it last wrote status for generation 0)",
	}, {
		name: "a member refused generation 2: False, naming it",
		st: federation.FederatedStatus{ObservedGeneration: 2, SyncedRevision: 3,
			Clusters: []federation.MemberStatus{at("a", 4), func() federation.MemberStatus {
				e := at("b", 3)
				e.Propagation, e.Message = "UpdateFailed", "admission webhook denied the request"
				return e
			}()},
			Conditions: []metav1.Condition{propagated(metav1.ConditionFalse, "NotPropagated", "revision 4 runs in 1 of 2 cluster(s); waiting: b: UpdateFailed", 2)}},
		members:  []status.Member{fresh(running(3, 4), now), fresh(running(3, 3), now)},
		wantCond: metav1.ConditionFalse, reason: status.ReasonNotPropagated,
		message: "generation 2 does not run everywhere: b: UpdateFailed: admission webhook denied the request",
	}, {
		name: "sync says not propagated without a cluster to blame: its reason",
		st: federation.FederatedStatus{ObservedGeneration: 2, SyncedRevision: 3,
			Clusters:   []federation.MemberStatus{at("a", 3), at("b", 3)},
			Conditions: []metav1.Condition{propagated(metav1.ConditionFalse, "NotScheduled", "the preference is invalid", 2)}},
		members:  []status.Member{fresh(running(3, 3), now), fresh(running(3, 3), now)},
		wantCond: metav1.ConditionFalse, reason: status.ReasonNotPropagated,
		message: "generation 2 does not run everywhere: Propagated is False (NotScheduled): the preference is invalid",
	}, {
		name: "a staged rollout holds revision 4 in b: False",
		st: federation.FederatedStatus{ObservedGeneration: 2, SyncedRevision: 3,
			Rollout:    &federation.RolloutStatus{Revision: 4, StableRevision: 3, Phase: "Progressing", Stage: 1, Stages: 2, StageName: "canary"},
			Clusters:   []federation.MemberStatus{at("a", 4), at("b", 3)},
			Conditions: []metav1.Condition{propagated(metav1.ConditionTrue, "Propagated", "revision 4 runs in 2 cluster(s)", 2)}},
		members:  []status.Member{fresh(running(3, 4), now), fresh(running(3, 3), now)},
		wantCond: metav1.ConditionFalse, reason: status.ReasonNotPropagated,
		message: "generation 2 does not run everywhere: the rollout of revision 4 is Progressing at stage 1 of 2 (canary); b: sync rendered revision 3, not 4",
	}, {
		name: "no quorum comes first: Unknown NoQuorum",
		st: federation.FederatedStatus{ObservedGeneration: 1, SyncedRevision: 3,
			Clusters:   []federation.MemberStatus{at("a", 3), at("b", 3)},
			Conditions: []metav1.Condition{propagated(metav1.ConditionTrue, "Propagated", "", 1)}},
		members:  []status.Member{fresh(running(3, 3), now), {ClusterReady: false}},
		wantCond: metav1.ConditionUnknown, reason: status.ReasonNoQuorum,
		message: "fresh data from 1 of 2 placed clusters, not a majority: status.aggregated keeps its last values; no fresh data from: b",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.st.DeepCopy()
			st.Conditions = append(st.Conditions, readyCond(metav1.ConditionTrue, status.ReasonReady, t0))
			got := status.Aggregate(status.Input{Generation: 2, Status: st, Members: tt.members, Now: now, StaleAfter: staleAfter})
			require.Equal(t, tt.wantCond, got.Ready.Status, got.Ready.Message)
			require.Equal(t, tt.reason, got.Ready.Reason)
			require.Equal(t, tt.message, got.Ready.Message)
			require.Equal(t, int64(2), got.Ready.ObservedGeneration)
		})
	}
}

// TestCollectorReadyNotTrueForAnUnpropagatedGeneration: a new generation of a ready object is
// not Ready until sync has propagated it; a member that refuses it keeps Ready False.
func TestCollectorReadyNotTrueForAnUnpropagatedGeneration(t *testing.T) {
	e := newEnv(t, status.Options{})
	e.federate(t, []string{"a", "b", "c"}, []int64{1, 1, 1})
	e.reconcile(t)
	ready := readyOf(e.get(t))
	require.Equal(t, metav1.ConditionTrue, ready.Status, ready.Message)

	// The user changes the template: generation 2. Sync has not passed over it.
	u, err := e.host.Peek(fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, "nginx:2", "spec", "template", "spec", "image"))
	_, err = e.host.Update(ctx, fedGVR, u)
	require.NoError(t, err)
	e.step(30 * time.Second)
	e.reconcile(t)
	fed := e.get(t)
	require.Equal(t, int64(2), fed.Generation)
	ready = readyOf(fed)
	require.Equal(t, int64(2), ready.ObservedGeneration)
	require.NotEqual(t, metav1.ConditionTrue, ready.Status, "Ready for generation 2 before sync propagated it: %s", ready.Message)
	require.Equal(t, status.ReasonWaitingForPropagation, ready.Reason, ready.Message)

	// Sync's pass: a and b take revision 2, c refuses it and keeps running revision 1.
	e.syncPass(t, 2, 2, map[string]string{"c": "UpdateFailed"})
	for _, n := range []string{"a", "b"} {
		e.annotateRevision(t, n, "2")
	}
	e.step(30 * time.Second)
	e.reconcile(t)
	ready = readyOf(e.get(t))
	require.Equal(t, metav1.ConditionFalse, ready.Status, ready.Message)
	require.Equal(t, status.ReasonNotPropagated, ready.Reason)
	require.True(t, strings.Contains(ready.Message, "c: UpdateFailed"), ready.Message)

	// c takes it at last: Ready for generation 2.
	e.annotateRevision(t, "c", "2")
	e.syncPass(t, 2, 2, nil)
	e.step(30 * time.Second)
	e.reconcile(t)
	ready = readyOf(e.get(t))
	require.Equal(t, metav1.ConditionTrue, ready.Status, ready.Message)
	require.Equal(t, int64(2), ready.ObservedGeneration)
}

// syncPass writes sync's fields as its pass over generation gen at revision rev writes them:
// the clusters of failed keep the previous revision with the reason given, the others take
// rev; syncedRevision is rev once no cluster failed.
func (e *env) syncPass(t testing.TB, gen, rev int64, failed map[string]string) {
	t.Helper()
	u, err := e.host.Peek(fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
	cond := map[string]any{"type": federation.ConditionPropagated, "status": "True", "reason": "Propagated",
		"message": "in sync", "observedGeneration": gen, "lastTransitionTime": "2026-11-30T12:00:00Z"}
	synced := rev
	for _, it := range list {
		m := it.(map[string]any)
		m["revision"] = rev
		delete(m, "propagation")
		if reason, ok := failed[m["name"].(string)]; ok {
			m["revision"], m["propagation"], m["message"] = rev-1, reason, "refused"
			cond["status"], cond["reason"], cond["message"] = "False", "NotPropagated", "waiting"
			synced = rev - 1
		}
	}
	require.NoError(t, unstructured.SetNestedSlice(u.Object, list, "status", "clusters"))
	require.NoError(t, unstructured.SetNestedField(u.Object, gen, "status", "observedGeneration"))
	require.NoError(t, unstructured.SetNestedField(u.Object, synced, "status", "syncedRevision"))
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := []any{cond}
	for _, c := range conds {
		if c.(map[string]any)["type"] != federation.ConditionPropagated {
			out = append(out, c)
		}
	}
	require.NoError(t, unstructured.SetNestedSlice(u.Object, out, "status", "conditions"))
	_, err = e.host.UpdateStatus(ctx, fedGVR, u)
	require.NoError(t, err)
}

// annotateRevision sets the member's revision annotation in cluster, as sync's update does.
func (e *env) annotateRevision(t testing.TB, cluster, rev string) {
	t.Helper()
	m, _ := e.fleet.Member(cluster)
	require.NoError(t, m.Drift(depGVR, key.Namespace, key.Name, func(o *unstructured.Unstructured) {
		a := o.GetAnnotations()
		a[federation.RevisionAnnotation] = rev
		o.SetAnnotations(a)
	}))
}

// Before sync has passed over a new object (no status.clusters, no Propagated condition) the
// Collector has nothing to report and writes nothing: a NoClusters Ready condition there was
// one more host write per new object, and a Conflict for sync's and the scheduler's writes.
// Once sync says the object is placed nowhere, NoClusters is written.
func TestCollectorWaitsForSyncOnANewObject(t *testing.T) {
	e := newEnv(t, status.Options{})
	require.NoError(t, e.host.Seed(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fedGVR.GroupVersion().String(), "kind": federation.DeploymentType.Federated.Kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "generation": int64(1)},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"replicas": int64(3)}}},
	}}))
	e.writes()

	res := e.reconcile(t)
	require.Equal(t, federation.DefaultStatusPollInterval, res.RequeueAfter)
	require.Zero(t, e.writes(), "no write before sync's")
	require.Equal(t, metav1.Condition{}, readyOf(e.get(t)))

	// Sync's pass: placed in no cluster.
	u, err := e.host.Peek(fedGVR, key.Namespace, key.Name)
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
		"type": federation.ConditionPropagated, "status": "True", "reason": "Propagated",
		"message": "placed in no cluster", "lastTransitionTime": "2026-11-30T12:00:00Z",
	}}, "status", "conditions"))
	_, err = e.host.UpdateStatus(ctx, fedGVR, u)
	require.NoError(t, err)
	e.writes()

	e.reconcile(t)
	require.Equal(t, 1, e.writes())
	ready := readyOf(e.get(t))
	require.Equal(t, status.ReasonNoClusters, ready.Reason, ready.Message)
	require.Equal(t, metav1.ConditionFalse, ready.Status)
}
