package gate_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
)

// An embedder's own invariant: nothing is deleted in a namespace labelled protected=true.
// The gate reads the namespace when the driver did not (Evidence.Namespace), and refuses the
// delete, naming the object, the cluster and the invariant. Preview calls Check, the same
// function, to show what the gate would refuse.
func Example_protectedNamespaces() {
	ctx := context.Background()
	protected := gate.Invariant{Name: "protected-namespace", Check: func(w gate.Write) string {
		if w.Verb == gate.Delete && w.Evidence.Namespace != nil && w.Evidence.Namespace.GetLabels()["protected"] == "true" {
			return "namespace " + w.Evidence.Namespace.GetName() + " is labelled protected=true"
		}
		return ""
	}}
	g := gate.New(gate.Options{Invariants: []gate.Invariant{protected}})

	eu := fake.NewCluster("eu")
	for _, doc := range []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "payments", "labels": map[string]any{"protected": "true"}}},
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop"}},
	} {
		_, _ = eu.Create(ctx, namespaces, &unstructured.Unstructured{Object: doc})
	}
	for _, ns := range []string{"payments", "shop"} {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": ns, "labels": map[string]any{federation.ManagedByLabel: federation.ManagedByValue}}}}
		live, _ := eu.Create(ctx, configMaps, cm)
		err := g.Delete(ctx, eu, gate.Write{
			Verb: gate.Delete, Cluster: "eu", Resource: configMaps, Object: live,
			Evidence: gate.Evidence{Mark: gate.ManagedBy("")},
		}, metav1.DeleteOptions{})
		fmt.Println(ns+":", err)
	}
	fmt.Println(g.Invariants())
	// Output:
	// payments: delete configmaps payments/settings in cluster eu: namespace payments is labelled protected=true (invariant protected-namespace): refused by the gate
	// shop: <nil>
	// [reserved-namespace ours claim last-running-copy namespace-empty secret-placement protected-namespace]
}
