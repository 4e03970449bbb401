package status

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestDecideHealth(t *testing.T) {
	ready := func(s metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: federation.ConditionReady, Status: s, Reason: reason, Message: "old", LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}
	}
	ok := probeResult{kind: probeOK}
	down := probeResult{kind: probeUnreachable, err: "connection refused"}
	tests := []struct {
		name       string
		prev       []metav1.Condition
		state      probeState
		result     probeResult
		wantStatus metav1.ConditionStatus
		wantReason string
		transition bool
		offline    metav1.ConditionStatus // "" = left alone
	}{
		{"new, enough successes", nil, probeState{successes: 2}, ok, metav1.ConditionTrue, ReasonClusterReady, true, metav1.ConditionFalse},
		{"new, first failure", nil, probeState{failures: 1}, down, metav1.ConditionUnknown, ReasonProbing, true, ""},
		{"ready, 2 failures", ready(metav1.ConditionTrue, ReasonClusterReady), probeState{failures: 2}, down, metav1.ConditionTrue, ReasonClusterReady, false, metav1.ConditionFalse},
		{"ready, 3 failures", ready(metav1.ConditionTrue, ReasonClusterReady), probeState{failures: 3}, down, metav1.ConditionFalse, ReasonClusterUnreachable, true, metav1.ConditionTrue},
		{"down, 1 success of 2", ready(metav1.ConditionFalse, ReasonClusterUnreachable), probeState{successes: 1}, ok, metav1.ConditionFalse, ReasonClusterUnreachable, false, metav1.ConditionTrue},
		{"not ready answer", ready(metav1.ConditionTrue, ReasonClusterReady), probeState{failures: 3}, probeResult{kind: probeNotReady, err: "500"}, metav1.ConditionFalse, ReasonClusterNotReady, true, metav1.ConditionFalse},
		{"no client", ready(metav1.ConditionTrue, ReasonClusterReady), probeState{failures: 3}, probeResult{kind: probeNoClient, err: "x"}, metav1.ConditionFalse, ReasonClientUnavailable, true, metav1.ConditionUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := decideHealth(tt.prev, tt.state, tt.result, 3, 2, t0)
			require.Equal(t, tt.wantStatus, h.ready.Status)
			require.Equal(t, tt.wantReason, h.ready.Reason)
			require.Equal(t, tt.transition, h.transition)
			if tt.transition {
				require.Equal(t, metav1.NewTime(t0), h.ready.LastTransitionTime)
			} else {
				require.Equal(t, metav1.NewTime(t0.Add(-time.Hour)), h.ready.LastTransitionTime)
			}
			if tt.offline == "" {
				require.Nil(t, h.offline)
			} else {
				require.Equal(t, tt.offline, h.offline.Status)
			}
		})
	}

	// A cluster that stays down keeps the message of its first failure: a new error text
	// every probe would be a write every probe.
	prev := []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionFalse, Reason: ReasonClusterUnreachable, Message: "first"}}
	h := decideHealth(prev, probeState{failures: 9}, probeResult{kind: probeUnreachable, err: "dial tcp: i/o timeout (request 42)"}, 3, 1, t0)
	require.Equal(t, "first", h.ready.Message)
}

func TestDesiredTaints(t *testing.T) {
	notReady := metav1.Condition{Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0)}
	isReady := metav1.Condition{Status: metav1.ConditionTrue}
	added := metav1.NewTime(t0.Add(-time.Hour))
	user := corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	own := func(key string, e corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Effect: e, TimeAdded: &added}
	}
	tests := []struct {
		name        string
		in          []corev1.Taint
		ready       metav1.Condition
		unreachable bool
		notReadyFor time.Duration
		want        []string
		changed     bool
		next        time.Duration
	}{
		{"ready, nothing", nil, isReady, false, 0, nil, false, 0},
		{"ready, user taint kept", []corev1.Taint{user}, isReady, false, 0, []string{"gpu:NoSchedule"}, false, 0},
		{"ready, own removed", []corev1.Taint{own(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule), user}, isReady, false, 0, []string{"gpu:NoSchedule"}, true, 0},
		{"not ready, added", []corev1.Taint{user}, notReady, false, time.Minute, []string{"gpu:NoSchedule", federation.TaintClusterNotReady + ":NoSchedule"}, true, 4 * time.Minute},
		{"unreachable, both", nil, notReady, true, 0, []string{federation.TaintClusterNotReady + ":NoSchedule", federation.TaintClusterUnreachable + ":NoSchedule"}, true, 5 * time.Minute},
		{"kept while the same", []corev1.Taint{own(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule)}, notReady, false, time.Minute, []string{federation.TaintClusterNotReady + ":NoSchedule"}, false, 4 * time.Minute},
		{"evicting", []corev1.Taint{own(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule)}, notReady, false, 5 * time.Minute, []string{federation.TaintClusterNotReady + ":NoExecute"}, true, 0},
		{"reachable again: unreachable removed", []corev1.Taint{own(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule), own(federation.TaintClusterUnreachable, corev1.TaintEffectNoSchedule)}, notReady, false, 0, []string{federation.TaintClusterNotReady + ":NoSchedule"}, true, 5 * time.Minute},
		{"NoExecute stays, however short this monitor has counted", []corev1.Taint{own(federation.TaintClusterNotReady, corev1.TaintEffectNoExecute)}, notReady, true, 0, []string{federation.TaintClusterNotReady + ":NoExecute", federation.TaintClusterUnreachable + ":NoExecute"}, true, 0},
		{"NoExecute goes once Ready", []corev1.Taint{own(federation.TaintClusterNotReady, corev1.TaintEffectNoExecute)}, isReady, false, time.Hour, nil, true, 0},
		{"duplicates cleaned", []corev1.Taint{own(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule), own(federation.TaintClusterNotReady, corev1.TaintEffectNoSchedule)}, notReady, false, 0, []string{federation.TaintClusterNotReady + ":NoSchedule"}, true, 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, next := desiredTaints(tt.in, taintInputs{ready: tt.ready, unreachable: tt.unreachable, notReadyFor: tt.notReadyFor, now: t0, evictionDelay: 5 * time.Minute})
			var keys []string
			for _, t := range got {
				keys = append(keys, t.Key+":"+string(t.Effect))
			}
			require.Equal(t, tt.want, keys)
			require.Equal(t, tt.changed, changed)
			require.Equal(t, tt.next, next)
		})
	}
}

func TestPodRequests(t *testing.T) {
	q := resource.MustParse
	always := corev1.ContainerRestartPolicyAlways
	rl := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q(cpu)}}
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"containers add", corev1.PodSpec{Containers: []corev1.Container{{Resources: rl("1")}, {Resources: rl("500m")}}}, "1500m"},
		{"a larger init container wins", corev1.PodSpec{Containers: []corev1.Container{{Resources: rl("1")}}, InitContainers: []corev1.Container{{Resources: rl("2")}}}, "2"},
		{"sidecars add and stay", corev1.PodSpec{Containers: []corev1.Container{{Resources: rl("1")}},
			InitContainers: []corev1.Container{{Resources: rl("500m"), RestartPolicy: &always}, {Resources: rl("1")}}}, "1500m"},
		{"overhead", corev1.PodSpec{Containers: []corev1.Container{{Resources: rl("1")}}, Overhead: corev1.ResourceList{corev1.ResourceCPU: q("250m")}}, "1250m"},
		{"pod-level requests replace", corev1.PodSpec{Containers: []corev1.Container{{Resources: rl("1")}}, Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("3")}}}, "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := podRequests(&tt.spec)[corev1.ResourceCPU]
			want := q(tt.want)
			require.Zero(t, want.Cmp(got), "got %s, want %s", got.String(), tt.want)
		})
	}
}

func TestCapRemote(t *testing.T) {
	big := strings.Repeat("x", 5000)
	conds := []any{map[string]any{"type": "Ready", "status": "True"}}
	tests := []struct {
		name  string
		in    map[string]any
		limit int
		want  map[string]any
	}{
		{"small", map[string]any{"a": "b"}, 100, map[string]any{"a": "b"}},
		{"no limit", map[string]any{"a": big}, -1, map[string]any{"a": big}},
		{"conditions kept", map[string]any{"a": big, "conditions": conds}, 4096,
			map[string]any{"conditions": conds, "truncated": "status of 5056 bytes exceeds the limit of 4096; only its conditions are kept"}},
		{"nothing fits", map[string]any{"a": big}, 4096, map[string]any{"truncated": "status of 5008 bytes exceeds the limit of 4096"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, capRemote(tt.in, tt.limit)); diff != "" {
				t.Errorf("capRemote (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadiness: the not-ready time within the window, on the monitor's own clock, and the
// successes a cluster needs to come back, doubled after each relapse up to eight times,
// back to normal once it has held Ready for a whole window.
func TestReadiness(t *testing.T) {
	const window = 15 * time.Minute
	steps := []struct {
		at          time.Duration
		ready, fell bool
		notReadyFor time.Duration
		needed      int
	}{
		{0, true, false, 0, 3},
		{time.Minute, false, true, 0, 3}, // first fall: SuccessThreshold
		{2 * time.Minute, false, false, time.Minute, 3},
		{3 * time.Minute, true, false, 2 * time.Minute, 3},
		{4 * time.Minute, false, true, 2 * time.Minute, 6}, // a relapse: twice
		{5 * time.Minute, true, false, 3 * time.Minute, 6},
		{6 * time.Minute, false, true, 3 * time.Minute, 12},
		{7 * time.Minute, true, false, 4 * time.Minute, 12},
		{8 * time.Minute, false, true, 4 * time.Minute, 24},
		{9 * time.Minute, true, false, 5 * time.Minute, 24},
		{10 * time.Minute, false, true, 5 * time.Minute, 24}, // at most eight times
		{11 * time.Minute, true, false, 6 * time.Minute, 24},
		{20 * time.Minute, true, false, 3 * time.Minute, 24}, // the spans before 5m have left the window
		{26 * time.Minute, true, false, 0, 3},                // Ready for a whole window: normal again
		{27 * time.Minute, false, true, 0, 3},                // and a fall is a first fall
		{28 * time.Minute, false, false, time.Minute, 3},
	}
	var r readiness
	for _, s := range steps {
		r = r.observe(s.ready, s.fell, t0.Add(s.at), window)
		got := struct {
			NotReadyFor time.Duration
			Needed      int
		}{r.notReadyFor(), r.successesNeeded(3, t0.Add(s.at), window)}
		want := struct {
			NotReadyFor time.Duration
			Needed      int
		}{s.notReadyFor, s.needed}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("at %s (-want +got):\n%s", s.at, diff)
		}
	}
}

// TestSummarizeLeavesOutNodesThatTakeNoWork: capacity and available count only the nodes
// a workload can be scheduled to. A NoSchedule or NoExecute taint (control-plane nodes,
// node.kubernetes.io/unschedulable, not-ready and unreachable nodes) or spec.unschedulable
// (cordoned) leaves a node out, with the pods bound to it; PreferNoSchedule does not.
func TestSummarizeLeavesOutNodesThatTakeNoWork(t *testing.T) {
	node := func(name string, unschedulable bool, taints ...corev1.Taint) corev1.Node {
		return corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.NodeSpec{Unschedulable: unschedulable, Taints: taints},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}
	}
	pod := func(nodeName, cpu string) corev1.Pod {
		return corev1.Pod{
			Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	taint := func(key string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Effect: effect}
	}
	worker := node("worker", false)
	tests := []struct {
		name                string
		nodes               []corev1.Node
		pods                []corev1.Pod
		capacity, available map[string]string
	}{
		{"a worker counts", []corev1.Node{worker}, []corev1.Pod{pod("worker", "1")},
			map[string]string{"cpu": "4", "pods": "110"}, map[string]string{"cpu": "3", "pods": "109"}},
		{"control-plane node (NoSchedule) left out, with its pods",
			[]corev1.Node{worker, node("cp", false, taint("node-role.kubernetes.io/control-plane", corev1.TaintEffectNoSchedule))},
			[]corev1.Pod{pod("worker", "1"), pod("cp", "2")},
			map[string]string{"cpu": "4", "pods": "110"}, map[string]string{"cpu": "3", "pods": "109"}},
		{"NoExecute taint left out",
			[]corev1.Node{worker, node("bad", false, taint("node.kubernetes.io/unreachable", corev1.TaintEffectNoExecute))}, nil,
			map[string]string{"cpu": "4", "pods": "110"}, map[string]string{"cpu": "4", "pods": "110"}},
		{"cordoned left out (spec.unschedulable and its taint)",
			[]corev1.Node{worker, node("cordoned", true, taint(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)), node("drained", true)}, nil,
			map[string]string{"cpu": "4", "pods": "110"}, map[string]string{"cpu": "4", "pods": "110"}},
		{"PreferNoSchedule still counts",
			[]corev1.Node{worker, node("soft", false, taint("spot", corev1.TaintEffectPreferNoSchedule))}, nil,
			map[string]string{"cpu": "8", "pods": "220"}, map[string]string{"cpu": "8", "pods": "220"}},
		{"only tainted nodes: nothing",
			[]corev1.Node{node("cp", false, taint("node-role.kubernetes.io/control-plane", corev1.TaintEffectNoSchedule))}, []corev1.Pod{pod("cp", "1")},
			map[string]string{}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, capacity, available := summarize(tt.nodes, tt.pods)
			if diff := cmp.Diff(tt.capacity, quantities(capacity)); diff != "" {
				t.Errorf("capacity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.available, quantities(available)); diff != "" {
				t.Errorf("available (-want +got):\n%s", diff)
			}
		})
	}
}

func quantities(l corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for name, q := range l {
		out[string(name)] = q.String()
	}
	return out
}
