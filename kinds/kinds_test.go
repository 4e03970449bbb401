package kinds_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/kinds"
)

var widget = federation.NewTypeConfig(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, "spec.replicas")

func withRules(r federation.KindRules) federation.TypeConfig {
	t := widget
	t.Rules = &r
	return t
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCompileRefuses: every rule that does not parse, type-check or return its type is named
// in one error wrapping ErrInvalidRules; nothing is compiled.
func TestCompileRefuses(t *testing.T) {
	_, err := kinds.Compile(withRules(federation.KindRules{
		Ready:              "self.status.phase == ",
		ObservedGeneration: `"one"`,
		Message:            "1 + 1",
		Dependencies:       []federation.DependencyRule{{Kind: "Pod", Names: "[self.spec.pod]"}},
		Retain:             []string{"metadata.labels", "spec..x"},
		Status:             map[string]string{"phase": "self.status.phase", "bad": "nope("},
	}))
	if !errors.Is(err, kinds.ErrInvalidRules) {
		t.Fatalf("Compile = %v; want ErrInvalidRules", err)
	}
	for _, want := range []string{"spec.rules.ready:", "spec.rules.observedGeneration:", "spec.rules.message:", "spec.rules.status.bad:",
		"spec.rules.dependencies[0].kind:", "spec.rules.retain[0]:", "spec.rules.retain[1]:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Compile's error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "status.phase:") {
		t.Errorf("the valid status rule is named in the error: %v", err)
	}
	if r, err := kinds.Compile(widget); r != nil || err != nil {
		t.Errorf("Compile(no rules) = %v, %v; want nil, nil", r, err)
	}
}

// TestEvaluate: each rule's answer, the message only when not ready, status values as JSON,
// dependencies sorted and unique; a rule that reads an absent field fails, naming itself.
func TestEvaluate(t *testing.T) {
	r, err := kinds.Compile(withRules(federation.KindRules{
		ObservedGeneration: "self.status.observed",
		Ready:              "self.status.phase == 'Running' && self.status.healthy",
		Message:            "'phase ' + self.status.phase",
		ReadyReplicas:      "self.status.up",
		Status:             map[string]string{"phase": "self.status.phase", "summary": "{'up': self.status.up, 'zones': self.status.zones}"},
		Dependencies:       []federation.DependencyRule{{Kind: "ConfigMap", Names: "[self.spec.config, self.spec.config] + self.spec.extra"}, {Kind: "Secret", Names: "has(self.spec.secret) ? [self.spec.secret] : []"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	obj := object(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {generation: 3}, spec: {config: b, extra: [a]}, status: {observed: 3, phase: Pending, healthy: true, up: 2, zones: [z1, z2]}}`)
	got, err := r.Evaluate(obj)
	if err != nil {
		t.Fatal(err)
	}
	three, two, no := int64(3), int64(2), false
	want := kinds.Result{ObservedGeneration: &three, ReadyReplicas: &two, Ready: &no, Message: "phase Pending",
		Status: map[string]any{"phase": "Pending", "summary": map[string]any{"up": float64(2), // a JSON number inside a value the rule built
			"zones": []any{"z1", "z2"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate (-want +got):\n%s", diff)
	}
	deps, err := r.Dependencies(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"ConfigMap": {"a", "b"}}, deps); diff != "" {
		t.Errorf("Dependencies (-want +got):\n%s", diff)
	}

	_, err = r.Evaluate(object(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {generation: 1}, spec: {}}`))
	if !errors.Is(err, kinds.ErrRuleFailed) || !strings.Contains(err.Error(), "spec.rules.observedGeneration") || !strings.Contains(err.Error(), "status") {
		t.Errorf("Evaluate(no status) = %v; want ErrRuleFailed naming spec.rules.observedGeneration and the field", err)
	}
}

// TestEvaluateIsBounded: a rule over a large list fails on its cost budget, it does not run on.
func TestEvaluateIsBounded(t *testing.T) {
	r, err := kinds.Compile(withRules(federation.KindRules{Ready: "self.spec.items.all(a, self.spec.items.all(b, self.spec.items.all(c, a + b + c >= 0)))"}))
	if err != nil {
		t.Fatal(err)
	}
	items := make([]any, 500)
	for i := range items {
		items[i] = int64(i)
	}
	_, err = r.Evaluate(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"items": items}}})
	if !errors.Is(err, kinds.ErrRuleFailed) || !strings.Contains(err.Error(), "cost") {
		t.Errorf("Evaluate = %v; want ErrRuleFailed over the cost limit", err)
	}
}
