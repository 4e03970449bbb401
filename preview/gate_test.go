package preview_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
	"github.com/fedkit/fedkit/preview"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestRunShowsWhatTheGateRefuses: web runs in c only, with available replicas, and moves to
// a. Until a's copy is available, deleting c's would take the workload's last running copy:
// the preview shows the gate refusing it (last-running-copy), and the Syncer, whose write
// goes through the same gate.Check, keeps c's copy and says RefusedByGate. Once the status
// says a's copy is available, both let it go.
func TestRunShowsWhatTheGateRefuses(t *testing.T) {
	l := newLoops(t, web(`{clusters: [{name: c}], failover: {purgeMode: Immediately}}`, ""))
	l.pass(t)
	l.pass(t)
	c, _ := l.fleet.Member("c")
	require.NoError(t, c.Drift(deployments, webKey.Namespace, webKey.Name, func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{"replicas": int64(4), "availableReplicas": int64(4)}
	}))
	require.NoError(t, l.host.Drift(federation.DeploymentType.FederatedGVR(), webKey.Namespace, webKey.Name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "a"}}, "spec", "placement", "clusters")
	}))
	_, err := l.sched.Reconcile(ctx, webKey)
	require.NoError(t, err)

	changes := func() map[string]string {
		rep, err := preview.Run(l.input(t))
		require.NoError(t, err)
		got := map[string]string{}
		for _, cl := range rep.Objects[0].Clusters {
			if cl.Change != nil && cl.Change.Action != plan.ActionNone.String() {
				got[cl.Name] = cl.Change.Action
				if cl.Change.Refused != nil {
					got[cl.Name] += " refused: " + cl.Change.Refused.Invariant
				}
			}
		}
		return got
	}
	if diff := cmp.Diff(map[string]string{"a": "Create", "c": "Delete refused: " + gate.InvariantLastCopy}, changes()); diff != "" {
		t.Fatalf("preview before a runs (-want +got):\n%s", diff)
	}
	_, err = l.sched.Reconcile(ctx, webKey)
	require.NoError(t, err)
	res, err := l.sync.Reconcile(ctx, webKey)
	require.NoError(t, err, "a refusal is no error to retry with backoff")
	require.Equal(t, gate.RecheckAfter, res.RequeueAfter, "a refusal is looked at again after a while")
	require.NotNil(t, l.member(t, "c"), "c's copy, the last running one, was deleted before a's was available")
	fed, err := l.host.Peek(federation.DeploymentType.FederatedGVR(), webKey.Namespace, webKey.Name)
	require.NoError(t, err)
	entries, _, _ := unstructured.NestedSlice(fed.Object, "status", "clusters")
	var reason string
	for _, e := range entries {
		if m := e.(map[string]any); m["name"] == "c" {
			reason, _ = m["propagation"].(string)
		}
	}
	require.Equal(t, plan.ReasonRefused, reason, "c's entry: %v", entries)
	conds, _, _ := unstructured.NestedSlice(fed.Object, "status", "conditions")
	var propagated map[string]any
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == federation.ConditionPropagated {
			propagated = m
		}
	}
	require.Equal(t, plan.ReasonRefused, propagated["reason"], "Propagated: %v", propagated)
	require.Contains(t, propagated["message"], "delete deployments.apps shop/web in cluster c")
	require.Contains(t, propagated["message"], "(invariant "+gate.InvariantLastCopy+")")

	// The collector sees a's copy available: the gate lets c's go.
	require.NoError(t, l.host.Drift(federation.DeploymentType.FederatedGVR(), webKey.Namespace, webKey.Name, func(u *unstructured.Unstructured) {
		entries, _, _ := unstructured.NestedSlice(u.Object, "status", "clusters")
		for i, e := range entries {
			if m := e.(map[string]any); m["name"] == "a" {
				m["availableReplicas"] = int64(4)
				entries[i] = m
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, entries, "status", "clusters")
	}))
	if diff := cmp.Diff(map[string]string{"c": "Delete"}, changes()); diff != "" {
		t.Fatalf("preview once a runs (-want +got):\n%s", diff)
	}
	l.pass(t)
	require.Nil(t, l.member(t, "c"), "c's copy stayed after a's was available")
}
