package override_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

// The benchmarks use testdata/bench-deployment.yaml, a realistic Deployment (about 3.5 KB of
// JSON: two containers, an init container, probes, resources, affinity, volumes) and a 5-op
// patch of the kind clusters get: replicas, an image, an env var, a label, a memory limit.
// Compare:
//
//	go test ./override -run '^$' -bench . -benchmem
//	go test ./override -run '^$' -bench Fleet -benchtime 1x -cpu 1

const benchPatch = `
- {path: /spec/replicas, value: 4}
- {path: /spec/template/spec/containers/0/image, value: "registry.eu.example.com:5000/storefront/checkout:2.14.3"}
- {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: FEATURE_X, value: "on"}}
- {op: add, path: /metadata/labels/topology.example.com~1region, value: eu}
- {path: /spec/template/spec/containers/0/resources/limits/memory, value: 1Gi}`

func benchDeployment(tb testing.TB) *unstructured.Unstructured {
	data, err := os.ReadFile("testdata/bench-deployment.yaml")
	require.NoError(tb, err)
	return obj(tb, string(data))
}

func BenchmarkApply(b *testing.B) {
	base := benchDeployment(b)
	patch := ops(b, benchPatch)
	size, _ := json.Marshal(base.Object)
	b.Logf("object: %d bytes of JSON; %d ops", len(size), len(patch))
	for _, bc := range []struct {
		name  string
		apply func(*unstructured.Unstructured, []federation.OverrideOp) error
	}{
		{"fast", override.Apply},
		{"jsonpatch", override.ApplyJSONPatch},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			u := &unstructured.Unstructured{}
			for b.Loop() {
				// Apply never writes into base (copy-on-write), so it can be reused.
				u.Object = base.Object
				if err := bc.apply(u, patch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchInput is a render of the benchmark Deployment for one cluster: the 5-op patch as the
// cluster's named override, a schedule, and (withExisting) the member object to retain from.
func benchInput(tb testing.TB, base *unstructured.Unstructured, name string, withExisting bool) override.Input {
	tmpl := base.DeepCopy().Object
	delete(tmpl, "apiVersion")
	delete(tmpl, "kind")
	replicas := int64(3)
	in := override.Input{
		Key:           federation.Key{Namespace: "shop", Name: name},
		Template:      tmpl,
		Overrides:     []federation.ClusterOverride{{ClusterName: "eu-1", ClusterOverrides: ops(tb, benchPatch)}},
		Type:          federation.DeploymentType,
		ClusterName:   "eu-1",
		ClusterLabels: map[string]string{"region": "eu"},
		Replicas:      &replicas,
		Revision:      12,
	}
	if withExisting {
		existing, err := override.Render(in)
		require.NoError(tb, err)
		existing.SetResourceVersion("123456")
		existing.SetUID("3f2b1c4d-0000-1111-2222-333344445555")
		existing.SetFinalizers([]string{"example.com/protect"})
		a := existing.GetAnnotations()
		a["deployment.kubernetes.io/revision"] = "4"
		existing.SetAnnotations(a)
		existing.Object["status"] = map[string]any{"replicas": int64(4), "readyReplicas": int64(4), "observedGeneration": int64(9)}
		in.Existing = existing.DeepCopy() // as read from the member: shares nothing with the template
	}
	return in
}

func BenchmarkRender(b *testing.B) {
	base := benchDeployment(b)
	for _, bc := range []struct {
		name     string
		existing bool
	}{{"create", false}, {"update", true}} {
		b.Run(bc.name, func(b *testing.B) {
			in := benchInput(b, base, "checkout", bc.existing)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := override.Render(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenderMembers renders the benchmark Deployment for 10 clusters in one call, each
// an update with retention; ns/op is for the 10.
func BenchmarkRenderMembers(b *testing.B) {
	const clusters = 10
	in := benchInput(b, benchDeployment(b), "checkout", true)
	members := make([]override.Member, clusters)
	for c := range members {
		members[c] = override.Member{Name: "eu-1", Labels: in.ClusterLabels, Replicas: in.Replicas, Existing: in.Existing}
	}
	var r override.Renderer
	b.ReportAllocs()
	for b.Loop() {
		for _, res := range r.RenderMembers(in, members) {
			if res.Err != nil {
				b.Fatal(res.Err)
			}
		}
	}
}

// BenchmarkRenderMembersEncodingCache is BenchmarkRenderMembers with and without the identity
// cache of the template's encodings (hash.go's encodingCache): the cache stays only while
// "cache" is clearly faster than "no-cache". On a busy machine compare cpu-ns/render (run
// with -cpu 1), which other processes disturb less than the wall time.
func BenchmarkRenderMembersEncodingCache(b *testing.B) {
	const clusters = 10
	in := benchInput(b, benchDeployment(b), "checkout", true)
	members := make([]override.Member, clusters)
	for c := range members {
		members[c] = override.Member{Name: "eu-1", Labels: in.ClusterLabels, Replicas: in.Replicas, Existing: in.Existing}
	}
	for _, bc := range []struct {
		name   string
		render func(*override.Renderer, override.Input, []override.Member) []override.Rendered
	}{
		{"cache", (*override.Renderer).RenderMembers},
		{"no-cache", override.RenderMembersWithoutEncodingCache},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var r override.Renderer
			b.ReportAllocs()
			start, cpu := time.Now(), cpuTime()
			for b.Loop() {
				for _, res := range bc.render(&r, in, members) {
					if res.Err != nil {
						b.Fatal(res.Err)
					}
				}
			}
			reportPerRender(b, start, cpu, clusters)
		})
	}
}

// BenchmarkRenderFleet renders 10,000 Deployments for 10 clusters each, every one an update
// with retention (the steady state of a sync loop). One op is the whole fleet; run it with
// -benchtime 1x -cpu 1. The objects and existing members are distinct copies, so nothing is
// shared between renders that would not be in a real control plane.
func BenchmarkRenderFleet(b *testing.B) {
	const objects, clusters = 10000, 10
	base := benchDeployment(b)
	inputs := make([]override.Input, objects)
	for i := range inputs {
		inputs[i] = benchInput(b, base, fmt.Sprintf("checkout-%05d", i), true)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for b.Loop() {
		for i := range inputs {
			for c := 0; c < clusters; c++ {
				if _, err := override.Render(inputs[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	reportPerRender(b, start, cpu, objects*clusters)
}

// reportPerRender reports the wall and CPU time per render since start and cpu (see cpuTime).
// Run the fleet benchmarks with -cpu 1: the CPU time is then the time on one core, garbage
// collection included.
func reportPerRender(b *testing.B, start time.Time, cpu time.Duration, renders int) {
	n := float64(b.N) * float64(renders)
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/n, "ns/render")
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/n, "cpu-ns/render")
}

// BenchmarkApplyFleetJSONPatch is the json-patch path on a tenth of the fleet (1,000 objects
// x 10 clusters), for the ratio: multiply by 10 for the whole fleet.
func BenchmarkApplyFleetJSONPatch(b *testing.B) {
	const objects, clusters = 1000, 10
	base := benchDeployment(b)
	patch := ops(b, benchPatch)
	objs := make([]*unstructured.Unstructured, objects)
	for i := range objs {
		objs[i] = base.DeepCopy()
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range objs {
			for c := 0; c < clusters; c++ {
				u := &unstructured.Unstructured{Object: objs[i].Object}
				if err := override.ApplyJSONPatch(u, patch); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkRenderMembersFleet is BenchmarkRenderFleet through RenderMembers, the batch entry
// point a sync loop uses: one call per object for its 10 clusters.
func BenchmarkRenderMembersFleet(b *testing.B) {
	const objects, clusters = 10000, 10
	base := benchDeployment(b)
	inputs := make([]override.Input, objects)
	members := make([][]override.Member, objects)
	for i := range inputs {
		inputs[i] = benchInput(b, base, fmt.Sprintf("checkout-%05d", i), true)
		for c := 0; c < clusters; c++ {
			members[i] = append(members[i], override.Member{Name: "eu-1", Labels: inputs[i].ClusterLabels, Replicas: inputs[i].Replicas, Existing: inputs[i].Existing})
		}
	}
	var r override.Renderer
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for b.Loop() {
		for i := range inputs {
			for _, res := range r.RenderMembers(inputs[i], members[i]) {
				if res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		}
	}
	reportPerRender(b, start, cpu, objects*clusters)
}
