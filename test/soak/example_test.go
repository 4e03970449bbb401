package soak_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/test/soak"
)

// An embedder soaks its own rule with fedkit's: here, that every Deployment the federation
// runs in a member keeps the app label its pods are selected by. Check reads the fakes (no
// API call); the harness names the seed, the step and the rule of each violation, with the
// replay command, and checks the rule after every step and at quiescence.
func ExampleInvariant() {
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	labelled := soak.Invariant{
		Rule: "app-label-kept",
		Check: func(w *soak.World) []soak.Violation {
			var out []soak.Violation
			for _, name := range w.Fleet.Names() {
				m, _ := w.Fleet.Member(name)
				for _, d := range m.Objects(deployments) {
					if d.GetLabels()[federation.ManagedByLabel] != "" && d.GetLabels()["app"] != d.GetName() {
						out = append(out, soak.Violation{Object: "Deployment " + d.GetNamespace() + "/" + d.GetName() + " in " + name, Message: "lost its app label"})
					}
				}
			}
			return out
		},
	}
	cfg := soak.Config{Seed: 1, Clusters: 3, Objects: 10, Steps: 4, Invariants: []soak.Invariant{labelled}}
	res, err := soak.Run(context.Background(), cfg, soak.Loops)
	if err != nil {
		fmt.Println(err)
		return
	}
	n := 0
	for _, v := range res.Violations {
		if v.Rule == labelled.Rule {
			n++
			fmt.Println(v) // seed 1, the chaos, step 2: [app-label-kept] Deployment ...: lost its app label
		}
	}
	fmt.Printf("%s: %d violation(s)\n", labelled.Rule, n)
	// Output: app-label-kept: 0 violation(s)
}
