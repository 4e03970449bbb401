package scheduler_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
)

// TestHouseMonotone checks Webster's house monotonicity: from a plan for R (running as
// Current, rebalance off), the plan for R+1 adds exactly one replica somewhere (or none, when
// every cluster is full) and the plan for R-1 takes exactly one away. With rebalance on, the
// plan for R+1 is the plan for R plus one replica.
func TestHouseMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range fedtest.Iterations(3000) {
		req := randomRequest(r, genOptions{maxClusters: 10, maxTotal: 200, maxWeight: 50})
		for j := range req.Clusters {
			req.Clusters[j].Current = nil
		}
		base, err := scheduler.Divide(req)
		require.NoError(t, err)

		if req.Rebalance {
			req.TotalReplicas++
			next, err := scheduler.Divide(req)
			require.NoError(t, err)
			if msg := oneMove(base, next, +1); msg != "" {
				t.Fatalf("case %d: %s: R -> R+1 with rebalance: %s", i, describe(req), msg)
			}
			continue
		}
		running := req
		running.Clusters = append([]scheduler.ClusterState(nil), req.Clusters...)
		for j := range running.Clusters {
			running.Clusters[j].Current = ptr(base.Replicas[running.Clusters[j].Name])
		}
		for _, delta := range []int64{+1, -1} {
			if req.TotalReplicas+delta < 0 {
				continue
			}
			moved := running
			moved.TotalReplicas += delta
			next, err := scheduler.Divide(moved)
			require.NoError(t, err)
			if msg := oneMove(base, next, delta); msg != "" {
				t.Fatalf("case %d: %s: R -> R%+d with running replicas: %s", i, describe(moved), delta, msg)
			}
		}
	}
}

// oneMove checks that next differs from base by exactly delta on one cluster, or only in
// the unplaced count (no room anywhere, or replicas that were unplaced anyway).
func oneMove(base, next scheduler.Plan, delta int64) string {
	var changed []string
	var sum int64
	for name, n := range next.Replicas {
		if d := n - base.Replicas[name]; d != 0 {
			changed = append(changed, fmt.Sprintf("%s %+d", name, d))
			sum += d
		}
	}
	if len(changed) == 0 && next.Unplaced == base.Unplaced+delta {
		return "" // the change went to (or came from) the unplaced replicas
	}
	if len(changed) != 1 || sum != delta {
		return fmt.Sprintf("changes %v; want one cluster %+d (base %v, next %v)", changed, delta, base.Replicas, next.Replicas)
	}
	return ""
}

// TestDeviation measures how far clusters land from their exact share R·w/W with random
// weights and no bounds, for both algorithms, and checks Webster stays within one replica.
func TestDeviation(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	worst := map[federation.Algorithm]float64{}
	for range fedtest.Iterations(2000) {
		c := 2 + r.IntN(200)
		total := r.Int64N(5000)
		req := randomWorkload(r, c, total)
		for _, alg := range []federation.Algorithm{federation.AlgorithmWebster, federation.AlgorithmKubeFed} {
			req.Algorithm = alg
			plan, err := scheduler.Divide(req)
			require.NoError(t, err)
			worst[alg] = math.Max(worst[alg], maxDeviation(req, plan))
		}
	}
	t.Logf("largest distance from the exact share over 2000 random inputs: Webster %.3f, KubeFed %.3f",
		worst[federation.AlgorithmWebster], worst[federation.AlgorithmKubeFed])
	require.Less(t, worst[federation.AlgorithmWebster], 1.0)
}

// TestOrderIndependent checks that the order of the request's clusters changes nothing but
// the order of Plan.Clusters().
func TestOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range fedtest.Iterations(2000) {
		req := randomRequest(r, genOptions{maxClusters: 10, maxTotal: 100, maxWeight: 9})
		req.Algorithm = federation.Algorithms()[r.IntN(2)]
		want, err := scheduler.Divide(req)
		require.NoError(t, err)
		r.Shuffle(len(req.Clusters), func(a, b int) { req.Clusters[a], req.Clusters[b] = req.Clusters[b], req.Clusters[a] })
		got, err := scheduler.Divide(req)
		require.NoError(t, err)
		if diff := cmp.Diff(want.Replicas, got.Replicas); diff != "" {
			t.Fatalf("case %d: %s: shuffled clusters changed the plan (-want +got):\n%s", i, describe(req), diff)
		}
	}
}

// TestSpreadProperties checks the spread invariants on random requests: the usual plan
// invariants, no domain above its share plus MaxSkew (unless its minimums ask for more), and
// MinDomains covered when replicas and room allow.
func TestSpreadProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	domains := []string{"us", "eu", "ap", "sa"}
	for i := range fedtest.Iterations(3000) {
		req := randomRequest(r, genOptions{maxClusters: 10, maxTotal: 60, maxWeight: 9})
		req.Spread = &scheduler.Spread{MinDomains: int32(r.IntN(4)), MaxSkew: r.Int64N(3)}
		for j := range req.Clusters {
			req.Clusters[j].Domain = domains[r.IntN(len(domains))]
		}
		plan, err := scheduler.Divide(req)
		require.NoError(t, err)
		if msg := checkPlan(req, plan); msg != "" {
			t.Fatalf("case %d: %s: %s", i, describe(req), msg)
		}
		perDomain := map[string]int64{}
		minsPerDomain := map[string]int64{}
		for _, a := range plan.Clusters() {
			perDomain[a.Domain] += a.Replicas
			minsPerDomain[a.Domain] += a.Min
		}
		groups := map[string]bool{}
		for _, a := range plan.Clusters() {
			if a.Preference != scheduler.NoPreference {
				groups[a.Domain] = true
			}
		}
		if req.Spread.MaxSkew > 0 && len(groups) > 0 {
			limit := req.TotalReplicas/int64(len(groups)) + req.Spread.MaxSkew
			for dom, n := range perDomain {
				if n > max(limit, minsPerDomain[dom]) {
					t.Fatalf("case %d: %s: domain %s has %d replicas, above %d", i, describe(req), dom, n, limit)
				}
			}
		}
	}
}

func TestInvalidRequests(t *testing.T) {
	tests := []struct {
		name string
		req  scheduler.Request
		want []string // substrings of the error
	}{
		{"negative total", scheduler.Request{TotalReplicas: -3}, []string{"spec.totalReplicas"}},
		{"negative weight", scheduler.Request{Clusters: []scheduler.ClusterState{{Name: "eu"}},
			Preferences: map[string]federation.ClusterPreferences{"eu": {Weight: -1}}}, []string{"spec.clusters[eu].weight"}},
		{"max below min", scheduler.Request{Preferences: map[string]federation.ClusterPreferences{"eu": {MinReplicas: ptr(3), MaxReplicas: ptr(1)}}},
			[]string{"spec.clusters[eu].maxReplicas", "minReplicas (3)"}},
		{"duplicate cluster", scheduler.Request{Clusters: []scheduler.ClusterState{{Name: "eu"}, {Name: "us"}, {Name: "eu"}}},
			[]string{`clusters[2].name: Duplicate value: "eu"`}},
		{"empty name", scheduler.Request{Clusters: []scheduler.ClusterState{{Name: ""}}}, []string{"clusters[0].name: Required"}},
		{"unknown algorithm", scheduler.Request{Algorithm: "DHondt"}, []string{`spec.algorithm: Unsupported value: "DHondt"`}},
		{"unknown strategy", scheduler.Request{Strategy: "Random"}, []string{`spec.strategy: Unsupported value: "Random"`}},
		{"spread with KubeFed", scheduler.Request{Algorithm: federation.AlgorithmKubeFed, Spread: &scheduler.Spread{MaxSkew: 1}},
			[]string{"spec.spread: Forbidden: needs algorithm Webster"}},
		{"spread with CostOptimized", scheduler.Request{Strategy: federation.StrategyCostOptimized, Spread: &scheduler.Spread{MaxSkew: 1}},
			[]string{"spec.spread: Forbidden: needs strategy Weighted or CapacityWeighted, not CostOptimized"}},
		{"spread with Duplicated", scheduler.Request{Strategy: federation.StrategyDuplicated, Spread: &scheduler.Spread{MaxSkew: 1}},
			[]string{"spec.spread: Forbidden: needs strategy Weighted or CapacityWeighted, not Duplicated"}},
		{"refill with KubeFed", scheduler.Request{Algorithm: federation.AlgorithmKubeFed, Refill: true}, []string{"spec.refill: Forbidden"}},
		{"KubeFed weights overflow", scheduler.Request{Algorithm: federation.AlgorithmKubeFed, TotalReplicas: 1,
			Clusters:    []scheduler.ClusterState{{Name: "a"}, {Name: "b"}},
			Preferences: map[string]federation.ClusterPreferences{"*": {Weight: math.MaxInt64}}}, []string{"overflows"}},
		{"negative spread", scheduler.Request{Spread: &scheduler.Spread{MinDomains: -1, MaxSkew: -1}},
			[]string{"spec.spread.minDomains", "spec.spread.maxSkew"}},
		{"negative cost", scheduler.Request{Clusters: []scheduler.ClusterState{{Name: "a", Cost: ptr(-1)}}}, []string{"clusters[0].cost"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := scheduler.Divide(tc.req)
			require.True(t, errors.Is(err, scheduler.ErrInvalidRequest), "Divide() error = %v; want ErrInvalidRequest", err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.Nil(t, plan.Replicas)
		})
	}
}

func TestString(t *testing.T) {
	names := []string{scheduler.Unbounded.String(), scheduler.MaxReplicas.String(), scheduler.Capacity.String(),
		scheduler.DomainSkew.String(), scheduler.NoPreference.String(), scheduler.OwnPreference.String(), scheduler.WildcardPreference.String()}
	require.Equal(t, "unbounded maxReplicas capacity domain skew no preference own preference preference \"*\"", strings.Join(names, " "))
}

// TestExplain checks the per-cluster explanation and the summary on one plan.
func TestExplain(t *testing.T) {
	plan, err := scheduler.Divide(scheduler.Request{
		TotalReplicas: 12,
		Clusters: []scheduler.ClusterState{
			{Name: "eu", Current: ptr(5)},
			{Name: "us", Capacity: ptr(2)},
			{Name: "ap"},
			{Name: "sa"},
		},
		Preferences: map[string]federation.ClusterPreferences{
			"eu": {MinReplicas: ptr(1), MaxReplicas: ptr(6), Weight: 2},
			"us": {Weight: 3},
			"ap": {Weight: 1},
		},
	})
	require.NoError(t, err)
	want := []string{
		"eu: 6 = min 1 + kept 4 + weight 1 (weight 2), capped by maxReplicas 6",
		"us: 2 (weight 3), capped by capacity 2",
		"ap: 4 (weight 1)",
		`sa: 0, no preference (neither "sa" nor "*")`,
	}
	var got []string
	for _, a := range plan.Clusters() {
		got = append(got, a.Explain())
		require.Equal(t, a.Explain(), plan.Explain(a.Name))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Explain() (-want +got):\n%s", diff)
	}
	require.Equal(t, "", plan.Explain("nope"))
	require.Equal(t, "12/12 replicas on 3 of 4 clusters (Webster, Weighted); capped: eu by maxReplicas 6, us by capacity 2; 1 without preference", plan.Summary())
}

// TestRefillProperties checks Refill on random requests (rebalance off, Webster, weights from
// the preferences or capacity): the usual plan invariants; no cluster below its fair share
// (its count with Rebalance on); Kept never more than was running; and no effect once every
// cluster runs its share.
func TestRefillProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range fedtest.Iterations(3000) {
		req := randomRequest(r, genOptions{maxClusters: 10, maxTotal: 60, maxWeight: 9})
		req.Rebalance, req.Refill = false, true
		req.Strategy = []federation.Strategy{"", federation.StrategyCapacityWeighted}[r.IntN(2)]
		plan, err := scheduler.Divide(req)
		require.NoError(t, err)
		if msg := checkPlan(req, plan); msg != "" {
			t.Fatalf("case %d: %s: %s", i, describe(req), msg)
		}
		fair := req
		fair.Rebalance, fair.Refill = true, false
		shares, err := scheduler.Divide(fair)
		require.NoError(t, err)
		for _, c := range req.Clusters {
			a, _ := plan.Cluster(c.Name)
			if a.Replicas < shares.Replicas[c.Name] {
				t.Fatalf("case %d: %s: %s got %d, below its fair share %d", i, describe(req), c.Name, a.Replicas, shares.Replicas[c.Name])
			}
			var running int64
			if c.Current != nil {
				running = *c.Current
			}
			if a.Kept > max(0, running-a.Min) {
				t.Fatalf("case %d: %s: %s kept %d with %d running and %d from its minimum", i, describe(req), c.Name, a.Kept, running, a.Min)
			}
		}

		// Once every cluster runs its share, a refill moves nothing.
		steady := req
		steady.Clusters = append([]scheduler.ClusterState(nil), req.Clusters...)
		for j := range steady.Clusters {
			v := shares.Replicas[steady.Clusters[j].Name]
			steady.Clusters[j].Current = &v
		}
		with, err := scheduler.Divide(steady)
		require.NoError(t, err)
		steady.Refill = false
		without, err := scheduler.Divide(steady)
		require.NoError(t, err)
		if diff := cmp.Diff(without.Replicas, with.Replicas); diff != "" {
			t.Fatalf("case %d: %s: a refill at the fair shares moved replicas (-without +with):\n%s", i, describe(req), diff)
		}
	}
}

// TestPlanNamesAreItsOwn: a plan's explanations keep the names of the request it was made
// for, when the caller then reuses its cluster slice for another request (divisions of the
// same names share one immutable copy; a division of others makes a new one).
func TestPlanNamesAreItsOwn(t *testing.T) {
	clusters := []scheduler.ClusterState{{Name: "a"}, {Name: "b"}}
	first, err := scheduler.Divide(scheduler.Request{TotalReplicas: 3, Clusters: clusters})
	require.NoError(t, err)
	again, err := scheduler.Divide(scheduler.Request{TotalReplicas: 4, Clusters: clusters})
	require.NoError(t, err)
	clusters[0].Name = "c" // the caller's slice, reused
	other, err := scheduler.Divide(scheduler.Request{TotalReplicas: 5, Clusters: clusters})
	require.NoError(t, err)
	names := func(p scheduler.Plan) []string {
		var out []string
		for _, c := range p.Schedule().Clusters {
			out = append(out, c.Name)
		}
		return out
	}
	for _, tc := range []struct {
		plan scheduler.Plan
		want []string
	}{{first, []string{"a", "b"}}, {again, []string{"a", "b"}}, {other, []string{"c", "b"}}} {
		if diff := cmp.Diff(tc.want, names(tc.plan)); diff != "" {
			t.Errorf("plan of %d: names (-want +got):\n%s", tc.plan.Total, diff)
		}
		if a, ok := tc.plan.Cluster(tc.want[0]); !ok || a.Name != tc.want[0] {
			t.Errorf("plan of %d: Cluster(%q) = %+v, %v", tc.plan.Total, tc.want[0], a, ok)
		}
	}
}
