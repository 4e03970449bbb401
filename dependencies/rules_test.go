package dependencies_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/kinds"
)

// TestRulesExtractor: a kind without Go code names its dependencies by rules; none without
// rules; a rule that fails or does not compile is an error, never a guess.
func TestRulesExtractor(t *testing.T) {
	typ := fedtest.WidgetType
	if x := dependencies.RulesExtractor(typ); x != nil {
		t.Error("RulesExtractor of a kind without rules is not nil")
	}
	typ.Rules = &federation.KindRules{Dependencies: []federation.DependencyRule{
		{Kind: "ConfigMap", Names: "[self.spec.configRef]"},
		{Kind: "Secret", Names: "has(self.spec.tls) ? [self.spec.tls.secretName] : []"},
	}}
	x := dependencies.RulesExtractor(typ)
	got, err := x(map[string]any{"spec": map[string]any{"configRef": "settings", "tls": map[string]any{"secretName": "cert"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []dependencies.Reference{{Kind: "ConfigMap", Name: "settings"}, {Kind: "Secret", Name: "cert"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := x(map[string]any{"spec": map[string]any{}}); !errors.Is(err, kinds.ErrRuleFailed) {
		t.Errorf("a template without spec.configRef: %v; want ErrRuleFailed", err)
	}
	typ.Rules.Dependencies[0].Names = "[self.spec.configRef"
	if _, err := dependencies.RulesExtractor(typ)(map[string]any{}); !errors.Is(err, kinds.ErrInvalidRules) {
		t.Errorf("rules that do not compile: %v; want ErrInvalidRules", err)
	}
}
