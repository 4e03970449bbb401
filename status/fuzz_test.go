package status_test

import (
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/status"
)

// FuzzExtract feeds arbitrary JSON as a member object's status and spec to every built-in
// extractor and GenericStatus: none may panic, modify the object or give two answers for one
// input, and a successful extraction of a workload kind has its four counts.
func FuzzExtract(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"replicas":3,"readyReplicas":2,"availableReplicas":2,"updatedReplicas":3,"observedGeneration":1}`, `{"replicas":3}`},
		{`{"desiredNumberScheduled":4,"numberReady":4,"numberAvailable":"x"}`, `{}`},
		{`{"active":1,"conditions":[{"type":"Complete","status":"True"},"x",{"type":1}]}`, `null`},
		{`{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}`, `{"type":"LoadBalancer"}`},
		{`"just a string"`, `[1,2]`},
		{`{"replicas":1e300,"readyReplicas":-1,"conditions":{"type":"Ready"}}`, `{"replicas":null,"updateStrategy":{"rollingUpdate":{"partition":"a"}}}`},
		{`null`, `{"updateStrategy":"OnDelete"}`},
	} {
		f.Add(seed[0], seed[1], int64(1))
	}
	kinds := map[string]status.Extractor{"Generic": status.GenericStatus}
	for gk, e := range status.DefaultExtractors() {
		kinds[gk.Kind] = e
	}
	f.Fuzz(func(t *testing.T, statusJSON, specJSON string, generation int64) {
		var st, spec any
		if utiljson.Unmarshal([]byte(statusJSON), &st) != nil || utiljson.Unmarshal([]byte(specJSON), &spec) != nil {
			return
		}
		for kind, extract := range kinds {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": kind,
				"metadata": map[string]any{"name": "x", "generation": generation},
				"status":   st,
				"spec":     spec,
			}}
			before := obj.DeepCopy()
			o1, err1 := extract(obj)
			o2, err2 := extract(obj)
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Fatalf("%s: the extractor modified its input (-before +after):\n%s", kind, diff)
			}
			if (err1 == nil) != (err2 == nil) || !cmp.Equal(o1, o2) {
				t.Fatalf("%s: two answers for one input: %+v, %v and %+v, %v", kind, o1, err1, o2, err2)
			}
			workload := kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet"
			if err1 == nil && workload && (o1.Replicas == nil || o1.ReadyReplicas == nil || o1.AvailableReplicas == nil || o1.UpdatedReplicas == nil) {
				t.Fatalf("%s: counts missing: %+v", kind, o1)
			}
			if err1 == nil && !o1.Ready && o1.Message == "" {
				t.Fatalf("%s: not ready without a message", kind)
			}
		}
	})
}
