package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

func agentConfigMap(manager, data string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": data}}}
	u.SetNamespace("default")
	u.SetName("web")
	if manager != "" {
		u.SetLabels(map[string]string{federation.ManagedByLabel: manager})
	}
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
	}
	return u
}

// TestDecideApply: a pull cluster's agent decides one Assignment's apply with Decide's
// per-cluster rules.
func TestDecideApply(t *testing.T) {
	desired := agentConfigMap(federation.ManagedByValue, "v1", false)
	tests := []struct {
		name       string
		live       *unstructured.Unstructured
		wantAction plan.Action
		wantReason string
		wantDrift  []string
	}{
		{name: "absent", wantAction: plan.ActionCreate},
		{name: "in line", live: agentConfigMap(federation.ManagedByValue, "v1", false), wantAction: plan.ActionNone},
		{name: "drifted", live: agentConfigMap(federation.ManagedByValue, "v0", false), wantAction: plan.ActionUpdate, wantDrift: []string{"/data/k"}},
		{name: "not the federation's", live: agentConfigMap("", "theirs", false), wantAction: plan.ActionNone, wantReason: plan.ReasonAlreadyExists},
		{name: "another federation's", live: agentConfigMap("another", "theirs", false), wantAction: plan.ActionNone, wantReason: plan.ReasonManagedByOther},
		{name: "being deleted", live: agentConfigMap(federation.ManagedByValue, "v1", true), wantAction: plan.ActionNone, wantReason: plan.ReasonWaitingForRemoval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := plan.DecideApply("edge", "", desired, tc.live, plan.Verified{}, nil)
			type got struct {
				Action plan.Action
				Reason string
				Drift  []string
			}
			if diff := cmp.Diff(got{tc.wantAction, tc.wantReason, tc.wantDrift}, got{ch.Action, ch.Reason, ch.Drift}); diff != "" {
				t.Errorf("DecideApply (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideRemoval: only what carries the federation's identity is deleted or orphaned.
func TestDecideRemoval(t *testing.T) {
	tests := []struct {
		name       string
		live       *unstructured.Unstructured
		orphan     bool
		wantAction plan.Action
		wantLabels map[string]string
	}{
		{name: "absent", wantAction: plan.ActionNone},
		{name: "ours", live: agentConfigMap(federation.ManagedByValue, "v1", false), wantAction: plan.ActionDelete},
		{name: "ours, orphaned", live: agentConfigMap(federation.ManagedByValue, "v1", false), orphan: true, wantAction: plan.ActionOrphan, wantLabels: map[string]string{}},
		{name: "not the federation's", live: agentConfigMap("", "theirs", false), wantAction: plan.ActionNone},
		{name: "another federation's", live: agentConfigMap("another", "theirs", false), wantAction: plan.ActionNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := plan.DecideRemoval("edge", "", tc.live, tc.orphan)
			if ch.Action != tc.wantAction {
				t.Errorf("DecideRemoval action = %q, want %q", ch.Action, tc.wantAction)
			}
			if tc.wantLabels != nil {
				if diff := cmp.Diff(tc.wantLabels, ch.Desired.GetLabels(), cmpEmptyMap); diff != "" {
					t.Errorf("orphaned labels (-want +got):\n%s", diff)
				}
			}
		})
	}
}

var cmpEmptyMap = cmp.Transformer("empty", func(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
})
