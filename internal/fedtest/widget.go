package fedtest

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
)

// WidgetCRD is a custom resource definition for the tests of kinds fedkit has no Go code for:
// widgets.example.com, namespaced, v1, with spec.replicas, spec.color (an enum), a
// spec.configRef and a status of its own (phase, healthy, readyReplicas, observedGeneration),
// a status subresource and a validation rule.
const WidgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [color]
            properties:
              replicas: {type: integer, minimum: 0}
              color: {type: string, enum: [red, green, blue]}
              size: {type: string}
              configRef: {type: string}
            x-kubernetes-validations:
            - {rule: "self.color != 'red' || self.size != 'large'", message: "large widgets are not red"}
          status:
            type: object
            properties:
              observedGeneration: {type: integer}
              phase: {type: string}
              healthy: {type: boolean}
              readyReplicas: {type: integer}
`

// WidgetType is the TypeConfig `kubectl fed enable widgets.example.com` makes of WidgetCRD.
var WidgetType = federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "spec.replicas")

// CRDGVR is apiextensions.k8s.io/v1 CustomResourceDefinitions.
var CRDGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// InstallWidgets creates WidgetCRD in each cluster (an existing one is left as it is).
func InstallWidgets(t testing.TB, clusters ...federation.ClusterClient) {
	t.Helper()
	for _, c := range clusters {
		Create(t, c, CRDGVR, WidgetCRD)
	}
}
