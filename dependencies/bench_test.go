package dependencies_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
)

// BenchmarkReconcile is the loop's pass over a namespace of 50 workloads, each referring to a
// ConfigMap of its own and one they share, in the steady state (nothing to write): the cost
// of reading, deciding and finding nothing to do, read live from a fake host.
func BenchmarkReconcile(b *testing.B) {
	e := fedtest.New(b, fedtest.Options{Namespaces: []string{"ns"}})
	fedtest.Create(b, e.Host, federation.ConfigMapType.TargetGVR(), `{apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: ns}, data: {a: b}}`)
	for i := range 50 {
		fedtest.Create(b, e.Host, federation.ConfigMapType.TargetGVR(), fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg-%d, namespace: ns}, data: {a: b}}`, i))
		workloadWith(b, e.Host, fmt.Sprintf("web-%d", i), fmt.Sprintf(`          containers: [{name: c, envFrom: [{configMapRef: {name: cfg-%d}}, {configMapRef: {name: shared}}]}]`, i), "a", "b")
	}
	d, err := dependencies.New(e.Host, federation.BuiltinTypes(), dependencies.Options{Clock: e.Clock})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	key := federation.Key{Namespace: "ns"}
	if _, err := d.Reconcile(ctx, key); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Reconcile(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
}
