package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/fedtest"
	"github.com/fedkit/fedkit/scheduler"
)

func ptr(v int64) *int64 { return &v }

// genOptions shapes random requests.
type genOptions struct {
	maxClusters int
	maxTotal    int64
	maxWeight   int64
	bigWeights  bool // sometimes weights near 2^62, to exercise the 128-bit comparisons
}

// randomRequest builds a valid request from r.
func randomRequest(r *rand.Rand, o genOptions) scheduler.Request {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "us-east", "eu-west", "ap-south"}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	n := r.IntN(o.maxClusters + 1)
	req := scheduler.Request{
		Key:           []string{"", "ns/web", "ns/api", "prod/frontend", "x/y"}[r.IntN(5)],
		TotalReplicas: r.Int64N(o.maxTotal + 1),
		Rebalance:     r.IntN(2) == 0,
	}
	opt := func(p int, f func() int64) *int64 {
		if r.IntN(100) < p {
			v := f()
			return &v
		}
		return nil
	}
	small := func() int64 { return r.Int64N(o.maxTotal/2 + 2) }
	for _, name := range names[:n] {
		req.Clusters = append(req.Clusters, scheduler.ClusterState{
			Name:     name,
			Current:  opt(60, small),
			Capacity: opt(30, small),
			Cost:     opt(70, func() int64 { return r.Int64N(4) }),
		})
	}
	if r.IntN(6) == 0 {
		return req // no preferences: an even split
	}
	req.Preferences = map[string]federation.ClusterPreferences{}
	pref := func() federation.ClusterPreferences {
		p := federation.ClusterPreferences{Weight: r.Int64N(o.maxWeight + 1)}
		if o.bigWeights && r.IntN(4) == 0 {
			p.Weight = 1<<62 + r.Int64N(1<<40)
		}
		p.MinReplicas = opt(40, func() int64 { return r.Int64N(4) })
		p.MaxReplicas = opt(30, func() int64 {
			lo := int64(0)
			if p.MinReplicas != nil {
				lo = *p.MinReplicas
			}
			return lo + r.Int64N(o.maxTotal/2+2)
		})
		return p
	}
	if r.IntN(2) == 0 {
		req.Preferences["*"] = pref()
	}
	for _, c := range req.Clusters {
		if r.IntN(3) > 0 {
			req.Preferences[c.Name] = pref()
		}
	}
	return req
}

// checkPlan checks the invariants every plan has and returns a description of the first
// broken one, or "".
func checkPlan(req scheduler.Request, plan scheduler.Plan) string {
	allocs := plan.Clusters()
	if len(plan.Replicas) != len(req.Clusters) || len(allocs) != len(req.Clusters) {
		return fmt.Sprintf("plan lists %d/%d clusters; want %d", len(plan.Replicas), len(allocs), len(req.Clusters))
	}
	var sum int64
	for i, a := range allocs {
		if a.Name != req.Clusters[i].Name || plan.Replicas[a.Name] != a.Replicas {
			return fmt.Sprintf("cluster %d: allocation %+v does not match the map (%d)", i, a, plan.Replicas[a.Name])
		}
		if a.Replicas < 0 || a.Min < 0 || a.Kept < 0 || a.Weighted < 0 || a.Min+a.Kept+a.Weighted != a.Replicas {
			return fmt.Sprintf("cluster %s: bad breakdown %+v", a.Name, a)
		}
		if c := req.Clusters[i].Capacity; c != nil && a.Replicas > *c {
			return fmt.Sprintf("cluster %s: %d replicas over capacity %d", a.Name, a.Replicas, *c)
		}
		if a.Preference == scheduler.NoPreference && a.Replicas != 0 {
			return fmt.Sprintf("cluster %s: %d replicas without a preference", a.Name, a.Replicas)
		}
		sum += a.Replicas
	}
	if plan.Unplaced < 0 || sum+plan.Unplaced != req.TotalReplicas {
		return fmt.Sprintf("sum %d + unplaced %d != total %d", sum, plan.Unplaced, req.TotalReplicas)
	}
	for name, v := range plan.Overflow {
		if v <= 0 {
			return fmt.Sprintf("overflow %s = %d", name, v)
		}
	}
	return ""
}

func TestWebsterEqualsSeatBySeat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, o := range []genOptions{
		{maxClusters: 6, maxTotal: 30, maxWeight: 5},
		{maxClusters: 12, maxTotal: 120, maxWeight: 1000},
		{maxClusters: 12, maxTotal: 60, maxWeight: 3},
		{maxClusters: 8, maxTotal: 80, maxWeight: 10, bigWeights: true},
	} {
		for i := range fedtest.Iterations(2500) {
			req := randomRequest(r, o)
			for _, st := range []federation.Strategy{federation.StrategyWeighted, federation.StrategyCapacityWeighted, federation.StrategyCostOptimized} {
				req.Strategy = st
				plan, err := scheduler.Divide(req)
				require.NoError(t, err)
				want, unplaced := referenceWebster(req)
				if diff := cmp.Diff(want, plan.Replicas); diff != "" || unplaced != plan.Unplaced {
					t.Fatalf("case %d (%s): Divide(%s) differs from the seat-by-seat definition (-want +got):\n%s\nunplaced %d, want %d",
						i, st, describe(req), diff, plan.Unplaced, unplaced)
				}
				if msg := checkPlan(req, plan); msg != "" {
					t.Fatalf("case %d: %s: %s", i, describe(req), msg)
				}
			}
		}
	}
}

func TestKubeFedEqualsTranscription(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, o := range []genOptions{
		{maxClusters: 6, maxTotal: 30, maxWeight: 5},
		{maxClusters: 12, maxTotal: 300, maxWeight: 1000},
	} {
		for i := range fedtest.Iterations(4000) {
			req := randomRequest(r, o)
			req.Algorithm = federation.AlgorithmKubeFed
			plan, err := scheduler.Divide(req)
			require.NoError(t, err)
			want, overflow := referenceKubeFed(req)
			if diff := cmp.Diff(want, plan.Replicas); diff != "" {
				t.Fatalf("case %d: %s: plan differs from KubeFed's (-want +got):\n%s", i, describe(req), diff)
			}
			if diff := cmp.Diff(overflow, plan.Overflow, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("case %d: %s: overflow differs from KubeFed's (-want +got):\n%s", i, describe(req), diff)
			}
			if msg := checkPlan(req, plan); msg != "" {
				t.Fatalf("case %d: %s: %s", i, describe(req), msg)
			}
		}
	}
}

// describe prints a request compactly for failure messages.
func describe(req scheduler.Request) string {
	s := fmt.Sprintf("key=%q total=%d rebalance=%v alg=%s strategy=%s clusters=[", req.Key, req.TotalReplicas, req.Rebalance, req.Algorithm, req.Strategy)
	for _, c := range req.Clusters {
		s += " " + c.Name
		if c.Current != nil {
			s += fmt.Sprintf(" cur=%d", *c.Current)
		}
		if c.Capacity != nil {
			s += fmt.Sprintf(" cap=%d", *c.Capacity)
		}
		if c.Cost != nil {
			s += fmt.Sprintf(" cost=%d", *c.Cost)
		}
		s += ";"
	}
	s += " ] prefs={"
	for k, p := range req.Preferences {
		s += fmt.Sprintf(" %s:w=%d", k, p.Weight)
		if p.MinReplicas != nil {
			s += fmt.Sprintf(",min=%d", *p.MinReplicas)
		}
		if p.MaxReplicas != nil {
			s += fmt.Sprintf(",max=%d", *p.MaxReplicas)
		}
	}
	return s + " }"
}

// TestKubeFedReschedulingEqualsTranscription exercises the bulk-skipped rounds: every cluster
// runs its previous share and the total moves a little, which makes KubeFed loop about R/C
// times while its kept replicas drain.
func TestKubeFedReschedulingEqualsTranscription(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for i := range fedtest.Iterations(1500) {
		c := 1 + r.IntN(12)
		total := r.Int64N(20000)
		req := randomWorkload(r, c, total)
		req.Algorithm = federation.AlgorithmKubeFed
		before, err := scheduler.Divide(req)
		require.NoError(t, err)
		for j := range req.Clusters {
			req.Clusters[j].Current = ptr(before.Replicas[req.Clusters[j].Name] + r.Int64N(3))
		}
		req.Rebalance = false
		req.TotalReplicas = max(0, total+r.Int64N(11)-5)
		plan, err := scheduler.Divide(req)
		require.NoError(t, err)
		want, overflow := referenceKubeFed(req)
		if diff := cmp.Diff(want, plan.Replicas); diff != "" {
			t.Fatalf("case %d: %s: plan differs from KubeFed's (-want +got):\n%s", i, describe(req), diff)
		}
		if diff := cmp.Diff(overflow, plan.Overflow, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("case %d: overflow differs (-want +got):\n%s", i, diff)
		}
	}
}

// TestKubeFedBudget checks that a request on which KubeFed's rounds would spin for ever gets
// an error instead of a hang.
func TestKubeFedBudget(t *testing.T) {
	_, err := scheduler.Divide(scheduler.Request{
		Algorithm: federation.AlgorithmKubeFed,
		// 2^24 replicas to place; every round b gets one while a drains 2^24 of its 2^48 kept
		// replicas: 2^24 rounds.
		TotalReplicas: 1<<48 + 1<<24,
		Clusters:      []scheduler.ClusterState{{Name: "a", Current: ptr(1 << 48)}, {Name: "b"}},
		Preferences: map[string]federation.ClusterPreferences{
			"a": {Weight: 1 << 30},
			"b": {Weight: 1},
		},
	})
	require.ErrorIs(t, err, scheduler.ErrInvalidRequest)
	require.Contains(t, err.Error(), "use Webster")
}

// TestWebsterManyClustersEqualsSeatBySeat reaches the selection paths that only large cluster
// counts take (quickselect, one seat each, tie-heavy equal weights with fewer replicas than
// clusters).
func TestWebsterManyClustersEqualsSeatBySeat(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 300 {
		c := 30 + r.IntN(300)
		total := r.Int64N(int64(3 * c))
		var req scheduler.Request
		switch i % 3 {
		case 0:
			req = equalWorkload(r, c, total)
		case 1:
			req = randomWorkload(r, c, total)
		default:
			req = minMaxWorkload(r, c, total)
		}
		req.Key = []string{"", "ns/web", "default/app"}[r.IntN(3)]
		if r.IntN(2) == 0 { // rescheduling: running replicas, a total a little off
			before, err := scheduler.Divide(req)
			require.NoError(t, err)
			for j := range req.Clusters {
				req.Clusters[j].Current = ptr(before.Replicas[req.Clusters[j].Name])
			}
			req.Rebalance = false
			req.TotalReplicas = max(0, total+r.Int64N(81)-40)
		}
		plan, err := scheduler.Divide(req)
		require.NoError(t, err)
		want, unplaced := referenceWebster(req)
		if diff := cmp.Diff(want, plan.Replicas); diff != "" || unplaced != plan.Unplaced {
			t.Fatalf("case %d (C=%d, R=%d): differs from the seat-by-seat definition (-want +got):\n%s", i, c, req.TotalReplicas, diff)
		}
	}
}
