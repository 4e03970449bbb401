package status_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/status"
)

// A platform team tests the rules of a custom resource in a unit test: the type
// configuration `kubectl fed enable widgets.example.com --rules rules.yaml` writes, a member
// of the fake fleet serving the CRD, and the extractor the status collector (and
// `kubectl fed get`) judges members with.
func ExampleKindExtractor() {
	widget := federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "spec.replicas")
	widget.Rules = &federation.KindRules{
		Ready:         "has(self.status) && self.status.phase == 'Running'",
		Message:       "has(self.status) ? 'phase ' + self.status.phase : 'no status yet'",
		ReadyReplicas: "has(self.status) && has(self.status.up) ? self.status.up : 0",
		Status:        map[string]string{"phase": "has(self.status) ? self.status.phase : 'Pending'"},
	}
	eu := fake.NewFleet().Add("eu", nil)
	err := eu.Apply(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions: [{name: v1, served: true, storage: true, subresources: {status: {}}, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: starting, namespace: shop}
spec: {replicas: 3}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: degraded, namespace: shop}
spec: {replicas: 3}
status: {phase: Degraded, up: 1}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: running, namespace: shop}
spec: {replicas: 3}
status: {phase: Running, up: 3}
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	judge := status.KindExtractor(widget)
	for _, name := range []string{"starting", "degraded", "running"} {
		obj, err := eu.Get(context.Background(), widget.TargetGVR(), "shop", name)
		if err != nil {
			fmt.Println(err)
			return
		}
		o, err := judge(obj)
		if err != nil {
			fmt.Println(name, err)
			continue
		}
		fmt.Printf("%s: ready %t %q, %d/%d up, phase %v\n", name, o.Ready, o.Message, *o.ReadyReplicas, *o.Replicas, o.Remote["phase"])
	}
	// Output:
	// starting: ready false "no status yet", 0/3 up, phase Pending
	// degraded: ready false "phase Degraded", 1/3 up, phase Degraded
	// running: ready true "", 3/3 up, phase Running
}
