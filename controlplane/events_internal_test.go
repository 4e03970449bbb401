package controlplane

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fedkit/fedkit/federation"
)

// TestFirstRolloutEventsNotWritten: the recorder drops the Normal events of a federated
// object's first rollout (generation 1, never Ready, no Warning), which its conditions tell,
// and writes every other event. A new object's Ready after the collector's first Ready=False
// was written before: one Event more than the three writes a new object should cost.
func TestFirstRolloutEventsNotWritten(t *testing.T) {
	fedObj := func(uid string, generation int64, ready string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "types.federation.k8s.io/v1alpha1", "kind": "FederatedConfigMap"}}
		u.SetNamespace("default")
		u.SetName("cfg-" + uid)
		u.SetUID(types.UID(uid))
		u.SetGeneration(generation)
		if ready != "" {
			u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": ready}}}
		}
		return u
	}
	typed := func(generation int64, ready metav1.ConditionStatus) *federation.FederatedObject {
		o := &federation.FederatedObject{TypeMeta: metav1.TypeMeta{APIVersion: "types.federation.k8s.io/v1alpha1", Kind: "FederatedConfigMap"}}
		o.Name, o.Namespace, o.UID, o.Generation = "typed", "default", "t", generation
		if ready != "" {
			o.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: ready}}
		}
		return o
	}
	cluster := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "core.federation.k8s.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": "eu", "generation": int64(1)}}}
	type event struct {
		obj         runtime.Object
		typ, reason string
	}
	for _, tc := range []struct {
		name   string
		events []event
		want   []string
	}{
		{"a new object: created, scheduled, Ready", []event{
			{fedObj("a", 1, ""), "Normal", "ScheduleChanged"},
			{fedObj("a", 1, ""), "Normal", "CreatedInCluster"},
			{fedObj("a", 1, ""), "Normal", "Ready"},
		}, nil},
		{"Ready after the collector's first Ready=False", []event{{fedObj("a", 1, "False"), "Normal", "Ready"}}, nil},
		{"a typed object on its first rollout", []event{{typed(1, ""), "Normal", "CreatedInCluster"}}, nil},
		{"a typed object that was Ready", []event{{typed(1, metav1.ConditionTrue), "Normal", "CreatedInCluster"}}, []string{"Normal CreatedInCluster"}},
		{"a cluster joining a Ready object's placement", []event{{fedObj("a", 1, "True"), "Normal", "CreatedInCluster"}}, []string{"Normal CreatedInCluster"}},
		{"a changed spec", []event{{fedObj("a", 2, "True"), "Normal", "UpdatedInCluster"}}, []string{"Normal UpdatedInCluster"}},
		{"Ready again after a Warning", []event{
			{fedObj("a", 1, "True"), "Warning", "NotReady"},
			{fedObj("a", 1, "False"), "Normal", "Ready"},
			{fedObj("b", 1, "False"), "Normal", "Ready"},
		}, []string{"Warning NotReady", "Normal Ready"}},
		{"a Warning on a new object", []event{{fedObj("a", 1, ""), "Warning", "CreateFailed"}}, []string{"Warning CreateFailed"}},
		{"a new Cluster", []event{{cluster, "Normal", "ClusterReady"}}, []string{"Normal ClusterReady"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := record.NewFakeRecorder(10)
			var rec record.EventRecorderLogger = fake
			f := &forwarder{clock: clocktesting.NewFakeClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))}
			f.to.Store(&rec)
			for _, e := range tc.events {
				f.Eventf(e.obj, e.typ, e.reason, "%s", "message")
			}
			close(fake.Events)
			var got []string
			for e := range fake.Events {
				got = append(got, e[:len(e)-len(" message")])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events written (-want +got):\n%s", diff)
			}
		})
	}
}
