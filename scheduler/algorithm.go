package scheduler

import "github.com/fedkit/fedkit/federation"

// Algorithm is how Divide splits replicas by weight. It is the same type as
// federation.Algorithm, the value of an RSP's spec.algorithm, so one vocabulary serves both
// the API and the pure functions: a Request can be filled straight from an RSP.
type Algorithm = federation.Algorithm

// The algorithms Divide runs, under the names callers of the pure functions use. They are the
// federation constants, not copies: Webster == federation.AlgorithmWebster.
const (
	// Webster divides by bounded Sainte-Laguë: minimums first, then seats by weight, never
	// above a maximum or a capacity. It is the default ("" means Webster).
	Webster = federation.AlgorithmWebster
	// KubeFed reproduces KubeFed's replica planner, for users who must keep its exact
	// results while they migrate.
	KubeFed = federation.AlgorithmKubeFed
)
