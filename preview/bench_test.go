package preview_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/preview"
)

// BenchmarkRun is the cost of a preview of one object with a selector override and a named
// one over 100 ready clusters: scheduling, plan.Decide for the 100 placed clusters and
// override.Validate rendering for each of them.
func BenchmarkRun(b *testing.B) {
	benchmarkRun(b, "")
}

// BenchmarkRunRollout is BenchmarkRun with a three-stage rollout (a canary by name, the dev
// clusters by selector, then 100%): what the rollout preview adds.
func BenchmarkRunRollout(b *testing.B) {
	benchmarkRun(b, `  rollout: {stages: [{name: canary, clusters: [c-1]}, {name: dev, clusterSelector: {matchLabels: {tier: dev}}}, {percentage: 100}]}`+"\n")
}

// benchmarkRun previews the object of BenchmarkRun, with the spec.rollout line given.
func benchmarkRun(b *testing.B, rollout string) {
	var docs []string
	for i := 0; i < 100; i++ {
		tier := "prod"
		if i%2 == 0 {
			tier = "dev"
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: core.federation.k8s.io/v1alpha1
kind: Cluster
metadata: {name: c-%d, labels: {tier: %s}}
spec: {apiEndpoint: "https://c%d.example.com"}
status: {conditions: [{type: Ready, status: "True", reason: Ok, message: ok, lastTransitionTime: "2026-12-01T00:00:00Z"}]}`, i, tier, i))
	}
	docs = append(docs, web(`{clusterSelector: {}}`, `[{clusterSelector: {matchLabels: {tier: dev}}, images: [{tag: "2"}], clusterOverrides: [{path: /spec/replicas, value: 4}]}, {clusterName: c-7, clusterOverrides: [{op: add, path: /spec/paused, value: true}]}]`)+rollout)
	in, err := preview.Decode([]byte(strings.Join(docs, "\n---\n")))
	if err != nil {
		b.Fatal(err)
	}
	in.Now = now
	b.ReportAllocs()
	for b.Loop() {
		rep, err := preview.Run(in)
		if err != nil || len(rep.Errors()) > 0 || (rollout != "") != (rep.Objects[0].Rollout != nil) {
			b.Fatal(err, rep.Errors())
		}
	}
}
