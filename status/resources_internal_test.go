package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
