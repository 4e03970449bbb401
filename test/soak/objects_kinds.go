package soak

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// The configured kind (see Features.Kinds): widgets.example.com, a custom resource fedkit has
// no Go code for, federated by a FederatedTypeConfig the script writes while the control
// plane runs, as `kubectl fed enable widgets.example.com --replicas-path spec.scale.count
// --rules FILE` writes it.

// widgetCRD is the custom resource members run: its replica count at spec.scale.count, a
// ConfigMap it reads at spec.configRef, a serial number its own controller assigns in each
// member (spec.serial, which rendering retains), and a status with conditions.
const widgetCRD = `
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
              scale:
                type: object
                properties:
                  count: {type: integer, minimum: 0}
              color: {type: string, enum: [red, green, blue]}
              configRef: {type: string}
              serial: {type: string}
          status:
            type: object
            properties:
              observedGeneration: {type: integer}
              readyCount: {type: integer}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
`

// widgetsReplicas is where a widget's replica count is: not spec.replicas.
const widgetsReplicas = "spec.scale.count"

// The rule sets the script writes into the FederatedTypeConfig (Event.Value of OpEnable).
const (
	rulesBase    = iota // the rules enable writes first
	rulesStrict         // valid, stricter: ready asks every replica ready, with a message
	rulesNoParse        // a ready rule that does not compile
	rulesFailing        // rules that compile and fail on some widgets (fields read unguarded)
	rulesCount
)

// widgetRules are the rule sets, by index: readiness from the Ready condition and the
// widget's readyCount, status values collected, the ConfigMap at spec.configRef a dependency,
// spec.serial retained.
func widgetRules(set int64) *federation.KindRules {
	r := &federation.KindRules{
		Ready:         "has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
		ReadyReplicas: "has(self.status) && has(self.status.readyCount) ? self.status.readyCount : 0",
		Status:        map[string]string{"readyCount": "has(self.status) && has(self.status.readyCount) ? self.status.readyCount : 0"},
		Dependencies:  []federation.DependencyRule{{Kind: "ConfigMap", Names: "has(self.spec.configRef) ? [self.spec.configRef] : []"}},
		Retain:        []string{"spec.serial"},
	}
	switch set {
	case rulesStrict:
		r.Ready += " && self.status.readyCount >= (has(self.spec.scale) && has(self.spec.scale.count) ? self.spec.scale.count : 1)"
		r.Message = "'ready ' + string(has(self.status) && has(self.status.readyCount) ? self.status.readyCount : 0)"
		r.AvailableReplicas = r.ReadyReplicas
	case rulesNoParse:
		r.Ready = "self.status.conditions.exists(c, c.type == "
	case rulesFailing:
		// Compiles, and fails on every widget: fields read unguarded that widgets lack.
		r.ReadyReplicas = "self.status.readyCount + self.status.spares"
		r.Dependencies[0].Names = "[self.spec.configRef, self.spec.paint]"
	}
	return r
}

// widgetType is the TypeConfig enable makes of widgetCRD with rule set set.
func widgetType(set int64) federation.TypeConfig {
	t := federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, widgetsReplicas)
	t.Rules = widgetRules(set)
	return t
}

// widgetKind is the federated kind of widgets.
var widgetKind = widgetType(rulesBase).Federated.Kind

// crdObject decodes a CustomResourceDefinition manifest.
func crdObject(manifest string) (*unstructured.Unstructured, *apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(manifest), crd); err != nil {
		return nil, nil, err
	}
	u := map[string]any{}
	if err := yaml.Unmarshal([]byte(manifest), &u); err != nil {
		return nil, nil, err
	}
	return &unstructured.Unstructured{Object: u}, crd, nil
}

// enableObjects are what `kubectl fed enable` writes for rule set set: the FederatedWidget CRD
// (its template's schema the target's, federation.CRDWithTemplateSchema) and the
// FederatedTypeConfig (federation.NewFederatedTypeConfig).
func enableObjects(set int64) (crd, ftc *unstructured.Unstructured, err error) {
	_, target, err := crdObject(widgetCRD)
	if err != nil {
		return nil, nil, err
	}
	t := widgetType(set)
	fcrd, err := federation.CRDWithTemplateSchema(t, target.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if err != nil {
		return nil, nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fcrd)
	if err != nil {
		return nil, nil, err
	}
	f, err := runtime.DefaultUnstructuredConverter.ToUnstructured(federation.NewFederatedTypeConfig(t))
	if err != nil {
		return nil, nil, err
	}
	delete(f, "status")
	return &unstructured.Unstructured{Object: m}, &unstructured.Unstructured{Object: f}, nil
}

// widgetColors are the template's and the overrides' colors.
var widgetColors = []string{"red", "green", "blue"}

// federatedWidget is a FederatedWidget: count replicas (Value%7), a color, the ConfigMap of
// dependency set Deps (0: none), an override of one cluster's color.
func federatedWidget(e Event) *unstructured.Unstructured {
	spec := map[string]any{"scale": map[string]any{"count": e.Value % 7}, "color": widgetColors[e.Value%3]}
	if e.Deps > 0 {
		spec["configRef"] = paintName(e.Deps)
	}
	obj := map[string]any{
		"apiVersion": federation.TypesGroupVersion.String(), "kind": widgetKind,
		"metadata": map[string]any{"namespace": e.Key.Namespace, "name": e.Key.Name},
		"spec": map[string]any{
			"template":              map[string]any{"spec": spec},
			"placement":             e.Placement.render(),
			"propagateDependencies": e.Deps > 0,
		},
	}
	u := &unstructured.Unstructured{Object: obj}
	if e.Cluster != "" {
		setWidgetOverride(u, e.Cluster, e.Total)
	}
	return u
}

// setWidgetOverride sets cluster's override of the widget's color (value 0 removes it).
func setWidgetOverride(u *unstructured.Unstructured, cluster string, value int64) {
	ovs, _, _ := unstructured.NestedSlice(u.Object, "spec", "overrides")
	out := make([]any, 0, len(ovs)+1)
	for _, o := range ovs {
		if m, _ := o.(map[string]any); m["clusterName"] != cluster {
			out = append(out, o)
		}
	}
	if value > 0 {
		out = append(out, map[string]any{"clusterName": cluster, "clusterOverrides": []any{
			map[string]any{"path": "/spec/color", "value": widgetColors[value%3]},
		}})
	}
	if len(out) == 0 {
		unstructured.RemoveNestedField(u.Object, "spec", "overrides")
		return
	}
	_ = unstructured.SetNestedSlice(u.Object, out, "spec", "overrides")
}

// paintSets is how many ConfigMaps of their own the widgets of a namespace refer to.
const paintSets = 2

// paintName names the widgets' own ConfigMaps.
func paintName(set int64) string { return fmt.Sprintf("paint-%d", set) }

// widgetName names the script's widgets.
func widgetName(i int) string { return fmt.Sprintf("wid-%04d", i) }
