package kinds_test

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/kinds"
)

// Compile once per change of a kind's configuration, evaluate on each member object.
func ExampleCompile() {
	t := widget
	t.Rules = &federation.KindRules{
		Ready:   "self.status.phase == 'Running'",
		Message: "'phase ' + self.status.phase",
		Dependencies: []federation.DependencyRule{
			{Kind: "ConfigMap", Names: "[self.spec.configRef]"},
		},
	}
	rules, err := kinds.Compile(t)
	if err != nil {
		fmt.Println(err)
		return
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"configRef": "settings"},
		"status": map[string]any{"phase": "Degraded"},
	}}
	res, err := rules.Evaluate(obj)
	fmt.Println(*res.Ready, res.Message, err)
	deps, _ := rules.Dependencies(obj.Object)
	fmt.Println(deps)

	// A rule that reads a field the object lacks fails, naming the rule.
	_, err = rules.Evaluate(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}})
	fmt.Println(err)

	// A rule that cannot return its type does not compile.
	t.Rules = &federation.KindRules{Ready: "self.status.phase + 'x'"}
	_, err = kinds.Compile(t)
	fmt.Println(errors.Is(err, kinds.ErrInvalidRules))
	// Output:
	// false phase Degraded <nil>
	// map[ConfigMap:[settings]]
	// kinds: rule failed: spec.rules.ready: no such key: status
	// true
}
