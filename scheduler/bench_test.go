package scheduler_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// Benchmarks: go test -run '^$' -bench . -benchmem ./scheduler
//
// Workloads, for C clusters and R replicas:
//   - equal:   every cluster weight 1 (the "*" preference), rebalance on;
//   - random:  random weights 1..1000 per cluster, rebalance on;
//   - minmax:  random weights, minReplicas 0..2 and maxReplicas around twice the even share;
//   - resched+1 / resched-1: random weights, rebalance off, every cluster running its share of
//     R, and the total goes to R±1 (the steady state of a scaling workload);
//   - eqresched+1: the same with equal weights, where KubeFed's planner loops about R/C rounds.
//
// Each benchmark reports dev, how far the furthest cluster lands from its exact share
// R·w/W (only for the unbounded workloads, where the share is well defined).

type workload struct {
	name string
	make func(r *rand.Rand, c int, total int64) scheduler.Request
}

func clusterNames(c int) []string {
	names := make([]string, c)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%05d", i)
	}
	return names
}

func equalWorkload(_ *rand.Rand, c int, total int64) scheduler.Request {
	req := scheduler.Request{Key: "bench/equal", TotalReplicas: total, Rebalance: true}
	for _, n := range clusterNames(c) {
		req.Clusters = append(req.Clusters, scheduler.ClusterState{Name: n})
	}
	return req
}

func randomWorkload(r *rand.Rand, c int, total int64) scheduler.Request {
	req := equalWorkload(r, c, total)
	req.Key = "bench/random"
	req.Preferences = make(map[string]federation.ClusterPreferences, c)
	for _, cl := range req.Clusters {
		req.Preferences[cl.Name] = federation.ClusterPreferences{Weight: 1 + r.Int64N(1000)}
	}
	return req
}

func minMaxWorkload(r *rand.Rand, c int, total int64) scheduler.Request {
	req := randomWorkload(r, c, total)
	req.Key = "bench/minmax"
	share := total/int64(c) + 1
	for name, p := range req.Preferences {
		p.MinReplicas = ptr(r.Int64N(3))
		p.MaxReplicas = ptr(*p.MinReplicas + share + r.Int64N(2*share))
		req.Preferences[name] = p
	}
	return req
}

// reschedWorkload returns the request for total+delta with every cluster running its share
// of total, random weights.
func reschedWorkload(alg federation.Algorithm, delta int64) func(r *rand.Rand, c int, total int64) scheduler.Request {
	return reschedOf(randomWorkload, alg, delta)
}

// reschedOf is reschedWorkload over any base workload.
func reschedOf(base func(r *rand.Rand, c int, total int64) scheduler.Request, alg federation.Algorithm, delta int64) func(r *rand.Rand, c int, total int64) scheduler.Request {
	return func(r *rand.Rand, c int, total int64) scheduler.Request {
		req := base(r, c, total)
		req.Key = "bench/resched"
		req.Algorithm = alg
		before, err := scheduler.Divide(req)
		if err != nil {
			panic(err)
		}
		for i := range req.Clusters {
			req.Clusters[i].Current = ptr(before.Replicas[req.Clusters[i].Name])
		}
		req.Rebalance = false
		req.TotalReplicas = max(0, total+delta)
		return req
	}
}

// maxDeviation returns how far the furthest cluster is from its exact share R·w/W.
func maxDeviation(req scheduler.Request, plan scheduler.Plan) float64 {
	var wsum float64
	weight := func(name string) float64 {
		if len(req.Preferences) == 0 {
			return 1
		}
		return float64(req.Preferences[name].Weight)
	}
	for _, c := range req.Clusters {
		wsum += weight(c.Name)
	}
	var worst float64
	for _, c := range req.Clusters {
		share := float64(req.TotalReplicas) * weight(c.Name) / wsum
		worst = math.Max(worst, math.Abs(float64(plan.Replicas[c.Name])-share))
	}
	return worst
}

func BenchmarkDivide(b *testing.B) {
	for _, alg := range []federation.Algorithm{federation.AlgorithmWebster, federation.AlgorithmKubeFed} {
		workloads := []workload{
			{"equal", equalWorkload},
			{"random", randomWorkload},
			{"minmax", minMaxWorkload},
			{"resched+1", reschedWorkload(alg, 1)},
			{"resched-1", reschedWorkload(alg, -1)},
			{"eqresched+1", reschedOf(equalWorkload, alg, 1)},
		}
		for _, w := range workloads {
			for _, c := range []int{3, 10, 100, 1000, 5000} {
				for _, total := range []int64{10, 1000, 100000} {
					name := fmt.Sprintf("%s/%s/C=%d/R=%d", alg, w.name, c, total)
					b.Run(name, func(b *testing.B) {
						req := w.make(rand.New(rand.NewPCG(uint64(c), uint64(total))), c, total)
						req.Algorithm = alg
						var plan scheduler.Plan
						var err error
						b.ReportAllocs()
						for b.Loop() {
							plan, err = scheduler.Divide(req)
						}
						if err != nil {
							b.Fatal(err)
						}
						if w.name == "equal" || w.name == "random" {
							b.ReportMetric(maxDeviation(req, plan), "dev")
						}
					})
				}
			}
		}
	}
}

// BenchmarkKubeFedPlanner runs the literal transcription of KubeFed's planner (maps, rounds
// without any shortcut; reference_test.go) on the same workloads: the baseline a KubeFed user
// has today on this machine.
func BenchmarkKubeFedPlanner(b *testing.B) {
	for _, w := range []workload{
		{"equal", equalWorkload},
		{"random", randomWorkload},
		{"resched+1", reschedWorkload(federation.AlgorithmKubeFed, 1)},
		{"eqresched+1", reschedOf(equalWorkload, federation.AlgorithmKubeFed, 1)},
	} {
		for _, c := range []int{100, 1000, 5000} {
			for _, total := range []int64{1000, 100000} {
				b.Run(fmt.Sprintf("%s/C=%d/R=%d", w.name, c, total), func(b *testing.B) {
					req := w.make(rand.New(rand.NewPCG(uint64(c), uint64(total))), c, total)
					req.Algorithm = federation.AlgorithmKubeFed
					b.ReportAllocs()
					for b.Loop() {
						referenceKubeFed(req)
					}
				})
			}
		}
	}
}

// fleetRequest is the workload of the side-by-side benchmark against KubeFed's planner, as
// issue 39 measures it: c clusters "member-%05d" (names, shared by every request of the
// same fleet, as a fleet's requests share its Clusters' names) with random weights 1..100
// (PCG seed 42, c), total replicas, Webster, rebalance on. With current, rebalance is off
// and each cluster runs its count in current (a previous plan).
func fleetRequest(names []string, total int64, current map[string]int64) scheduler.Request {
	c := len(names)
	r := rand.New(rand.NewPCG(42, uint64(c)))
	req := scheduler.Request{Key: "default/app", TotalReplicas: total, Rebalance: current == nil, Algorithm: scheduler.Webster,
		Preferences: make(map[string]federation.ClusterPreferences, c)}
	for _, name := range names {
		req.Preferences[name] = federation.ClusterPreferences{Weight: int64(1 + r.IntN(100))}
		cs := scheduler.ClusterState{Name: name}
		if current != nil {
			cs.Current = ptr(current[name])
		}
		req.Clusters = append(req.Clusters, cs)
	}
	return req
}

// BenchmarkDivideFleet is the side-by-side benchmark's fedkit half: a fresh plan of R
// replicas over C clusters, and R+1 rescheduled from the plan of R (rebalance off).
func BenchmarkDivideFleet(b *testing.B) {
	for _, c := range []int{100, 1000, 5000} {
		const total = 100000
		names := make([]string, c)
		for i := range names {
			names[i] = fmt.Sprintf("member-%05d", i)
		}
		prev, err := scheduler.Divide(fleetRequest(names, total, nil))
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range []struct {
			name string
			req  scheduler.Request
		}{
			{"fresh", fleetRequest(names, total, nil)},
			{"+1", fleetRequest(names, total+1, prev.Replicas)},
		} {
			b.Run(fmt.Sprintf("%s/C=%d/R=%d", w.name, c, total), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := scheduler.Divide(w.req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
