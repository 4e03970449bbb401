package conformance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NodeGVR is the core Node resource.
var NodeGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// nodeBehaviours: what a real server does to a Node created through the API. Its
// TaintNodesByCondition admission taints it node.kubernetes.io/not-ready:NoSchedule, which
// the node lifecycle controller removes once the kubelet reports Ready. A loop that counts a
// cluster's capacity from schedulable nodes sees a new node as taking no work until then.
func nodeBehaviours() []behaviour {
	return []behaviour{
		{"node/created-node-is-tainted-not-ready", func(t *testing.T, e *env) {
			n := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node"}}
			n.SetName(e.ns + "-node")
			created := e.create(t, NodeGVR, n)
			t.Cleanup(func() { _ = e.c.Delete(e.ctx, NodeGVR, "", n.GetName(), metav1.DeleteOptions{}) })
			want := []any{map[string]any{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}}
			for what, u := range map[string]*unstructured.Unstructured{"create": created, "get": e.get(t, NodeGVR, "", n.GetName())} {
				got, _, _ := unstructured.NestedSlice(u.Object, "spec", "taints")
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: spec.taints (-want +got):\n%s", what, diff)
				}
			}
			// An update that takes the taint off keeps it off (only creation taints).
			u := e.get(t, NodeGVR, "", n.GetName())
			unstructured.RemoveNestedField(u.Object, "spec", "taints")
			got, _, _ := unstructured.NestedSlice(e.update(t, NodeGVR, u).Object, "spec", "taints")
			if len(got) != 0 {
				t.Errorf("after an update without taints: %v", got)
			}
		}},
	}
}
