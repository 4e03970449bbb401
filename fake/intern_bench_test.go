package fake

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkFleetCreate creates one ConfigMap, as sync renders it, in each of 10 members of a
// fleet per iteration, and reports the heap the stores hold per member object
// (retained-B/object), which interning equal maps across members (internal/intern) cuts.
// Interning is off by default (cheaper writes) and on for scale runs: both are measured.
func BenchmarkFleetCreate(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("interning=%t", on), func(b *testing.B) { benchmarkFleetCreate(b, on) })
	}
}

func benchmarkFleetCreate(b *testing.B, interning bool) {
	ctx := context.Background()
	f := NewFleet()
	f.SetRecording(false)
	f.SetInterning(interning)
	members := make([]*Cluster, 10)
	for i := range members {
		members[i] = f.Add(fmt.Sprintf("member-%d", i), nil)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("cm-%07d", i)
		for _, c := range members {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{
					"namespace": "default", "name": name,
					"labels": map[string]any{
						"federation.k8s.io/federated-name": name, "federation.k8s.io/federated-namespace": "default",
						"federation.k8s.io/managed-by": "fedkit",
					},
					"annotations": map[string]any{"federation.k8s.io/desired-hash": "v2:09184005b52968db5372e768ed99f106", "federation.k8s.io/revision": "1"},
				},
				"data": map[string]any{"version": name, "app.properties": "color=blue\nsize=large\n"},
			}}
			if _, err := c.Create(ctx, internConfigMaps, obj); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N*len(members)), "retained-B/object")
	runtime.KeepAlive(members)
}
