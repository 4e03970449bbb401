// Package fedtest is the support fedkit's own tests share, so each package stops keeping a copy.
//
//	e := fedtest.New(t, fedtest.Options{Members: []fedtest.Member{{Name: "eu"}, {Name: "us"}}})
//	fedtest.Create(t, e.Host, federation.DeploymentType.FederatedGVR(), `{...}`)
//	fedtest.StepUntil(t, e.Clock.Step, time.Second, 60, what, cond)
//
// [New] builds a fake host and a fleet of registered members on one fake clock, with a
// Prometheus registry. [Create] and [Apply] write YAML through any ClusterClient (fake or
// real). [Eventually] polls real-time work with one limit, [Limit]. [StepUntil] steps a fake
// clock until a condition holds. [DeleteGuard] fails a test when a delete reaches the host or
// a member from anywhere but the gate (package gate), the user ([AsUser]) or the fake itself,
// by the call path. Story files are read by package internal/storytest.
//
// Only tests import it; ARCHITECTURE.md's import table has its row.
package fedtest
