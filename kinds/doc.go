// Package kinds compiles and evaluates a kind's rules: what fedkit must know of a kind it has
// no Go code for, declared in its type configuration (federation.KindRules) as CEL
// expressions, the language of Kubernetes' own admission policies and CRD validation rules.
//
//	rules, err := kinds.Compile(typ)             // once per change of typ's configuration
//	res, err := rules.Evaluate(memberObject)     // pure: no I/O, no clock
//
// Each rule is an expression over self, the member object as its JSON (a map): ready is a
// bool, observedGeneration and the replica counts are ints, message a string, each status
// value any JSON, each dependency rule a list of names. A rule left empty is not evaluated,
// and its field of [Result] stays unset: the status collector then applies its default for
// the common shape (status.GenericStatus: status.observedGeneration, a Ready or Available
// condition). So a kind's configuration states only what differs.
//
// Compile refuses a rule that does not parse, does not type-check or cannot return its type
// (ready: "self.status.phase" is a string, not a bool), with an error wrapping
// [ErrInvalidRules] that names every rule at fault by its field (spec.rules.ready). Evaluate
// returns an error wrapping [ErrRuleFailed] that names the rule when one fails on an object
// (a field it reads is absent and not guarded by has(), a value of another type), or runs
// over its cost budget ([CostLimit]). Neither ever panics, and neither guesses: a caller
// reports the error (the collector: the member not ready, with the error in the federated
// object's Ready condition and an Event).
//
// Where the rules are used: the status collector's extractor of a kind without Go code
// (status.KindExtractor), the dependencies loop's extractor of its references
// (dependencies.RulesExtractor), preview (which renders and judges with the same extractors)
// and `kubectl fed get`. A user tests a kind's rules in a unit test by evaluating them on the
// fake fleet's member objects (see the example).
package kinds
