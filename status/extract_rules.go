package status

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/kinds"
)

// KindExtractor returns the Extractor of typ's kind: the built-in one for the kinds of
// [DefaultExtractors], else [RulesExtractor](typ). The Collector, `kubectl fed get` and a
// user's tests judge a member object with it, so they judge it alike.
func KindExtractor(typ federation.TypeConfig) Extractor {
	if e, ok := DefaultExtractors()[typ.Target.GroupKind()]; ok {
		return e
	}
	return RulesExtractor(typ)
}

// RulesExtractor returns the Extractor of a kind fedkit has no Go code for, from its type
// configuration: [GenericStatus] (the common shape's defaults), with the member's desired
// replica count read at typ.ReplicasPath for a divisible kind (what the member is asked to
// run, as for the built-in workloads: spec.replicas, default 1), then typ.Rules, compiled
// once here (package kinds), over those defaults:
//
//   - observedGeneration replaces status.observedGeneration; an object whose controller is
//     behind its generation is not ready, whatever else the rules say;
//   - ready replaces the conditions' judgement, with message saying why not (else "rule
//     spec.rules.ready is false");
//   - readyReplicas, availableReplicas, updatedReplicas replace the status counts;
//   - status replaces the whole status in Observation.Remote with the named values.
//
// A rule that fails on an object is that object's error (wrapping kinds.ErrRuleFailed and
// naming the rule): the Collector reports the member not ready with it, and an Event. Rules
// that do not compile make every call return the compile error (wrapping
// kinds.ErrInvalidRules), so no member of the kind is judged by a guess.
func RulesExtractor(typ federation.TypeConfig) Extractor {
	rules, err := kinds.Compile(typ)
	if err != nil {
		return func(*unstructured.Unstructured) (Observation, error) { return Observation{}, err }
	}
	path := typ.ReplicasFields()
	return func(obj *unstructured.Unstructured) (Observation, error) {
		o, err := GenericStatus(obj)
		if err != nil {
			return Observation{}, err
		}
		if path != nil {
			f := fields{obj: obj.Object}
			n, ok := f.int(path...)
			if f.err != nil {
				return Observation{}, f.err
			}
			if !ok {
				n = 1
			}
			o.Replicas = &n
		}
		if rules == nil {
			return o, nil
		}
		res, err := rules.Evaluate(obj)
		if err != nil {
			return Observation{}, err
		}
		applyRules(&o, res, obj)
		return o, nil
	}
}

// applyRules sets what the rules said over the defaults in o.
func applyRules(o *Observation, res kinds.Result, obj *unstructured.Unstructured) {
	for _, x := range []struct{ from, to **int64 }{
		{&res.ReadyReplicas, &o.ReadyReplicas}, {&res.AvailableReplicas, &o.AvailableReplicas}, {&res.UpdatedReplicas, &o.UpdatedReplicas},
	} {
		if *x.from != nil {
			*x.to = *x.from
		}
	}
	if res.Status != nil {
		o.Remote = res.Status
	}
	if res.ObservedGeneration != nil {
		o.ObservedGeneration = res.ObservedGeneration
	}
	switch msg := behind(obj, o.ObservedGeneration); {
	case o.ObservedGeneration != nil && msg != "":
		o.Ready, o.Message = false, msg
	case res.Ready != nil:
		o.Ready, o.Message = *res.Ready, ""
		if !o.Ready {
			o.Message = res.Message
			if o.Message == "" {
				o.Message = "rule spec.rules.ready is false"
			}
		}
	case res.ObservedGeneration != nil:
		o.Ready, o.Message = conditionsReady(obj)
	}
}
