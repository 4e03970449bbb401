package dependencies

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/kinds"
)

// ExtractorFor returns the Extractor the loop uses for typ's kind: extractors' entry for its
// target (Builtin's, with Options.Extractors added), else RulesExtractor(typ); nil when the
// kind has none. Preview calls it too, so it reads references as the loop does.
func ExtractorFor(extractors map[schema.GroupVersionKind]Extractor, typ federation.TypeConfig) Extractor {
	if x := extractors[typ.Target]; x != nil {
		return x
	}
	return RulesExtractor(typ)
}

// RulesExtractor returns the Extractor of a kind fedkit has no Go code for, from its
// dependency rules (federation.KindRules.Dependencies, compiled by package kinds): each rule
// names objects of one kind, evaluated over the template as the member object (self.spec...).
// It returns nil when t has no dependency rules. Rules that do not compile make every call
// return the compile error (wrapping kinds.ErrInvalidRules), and a rule that fails on a
// template its error (kinds.ErrRuleFailed): the loop reports either in the workload's
// DependenciesResolved condition, and federates nothing on a guess.
func RulesExtractor(t federation.TypeConfig) Extractor {
	if t.Rules == nil || len(t.Rules.Dependencies) == 0 {
		return nil
	}
	rules, err := kinds.Compile(t)
	if err != nil {
		return func(map[string]any) ([]Reference, error) { return nil, err }
	}
	return func(template map[string]any) ([]Reference, error) {
		byKind, err := rules.Dependencies(template)
		if err != nil {
			return nil, err
		}
		var out []Reference
		for _, kind := range []string{KindConfigMap, KindSecret, KindServiceAccount, KindPersistentVolumeClaim} {
			for _, n := range byKind[kind] {
				out = append(out, Reference{Kind: kind, Name: n})
			}
		}
		slices.SortFunc(out, compareRefs)
		return out, nil
	}
}
