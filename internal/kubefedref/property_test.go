package kubefedref

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kfsched "sigs.k8s.io/kubefed/pkg/apis/scheduling/v1alpha1"
	"sigs.k8s.io/kubefed/pkg/controller/util/planner"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/migrate"
	"github.com/fedkit/fedkit/scheduler"
)

var (
	cases = flag.Int("cases", 3000, "random preferences per property")
	seed  = flag.Uint64("seed", 1, "first seed; a failure prints the seed that replays it")
)

// input is one random scheduling problem in KubeFed's terms.
type input struct {
	rsp      *kfsched.ReplicaSchedulingPreference
	key      string
	clusters []string
	current  map[string]int64 // nil with rebalance on, as KubeFed's scheduler still reads it
	capacity map[string]int64
}

func random(r *rand.Rand, withCapacity bool) input {
	n := 1 + r.IntN(8)
	in := input{key: fmt.Sprintf("ns-%d/app-%d", r.IntN(3), r.IntN(1000)), current: map[string]int64{}}
	for i := range n {
		in.clusters = append(in.clusters, fmt.Sprintf("member-%d", i))
	}
	r.Shuffle(len(in.clusters), func(i, j int) { in.clusters[i], in.clusters[j] = in.clusters[j], in.clusters[i] })
	spec := kfsched.ReplicaSchedulingPreferenceSpec{
		TargetKind:    "FederatedDeployment",
		TotalReplicas: int32(r.IntN(300)),
		Rebalance:     r.IntN(2) == 0,
		Clusters:      map[string]kfsched.ClusterPreferences{},
	}
	pref := func() kfsched.ClusterPreferences {
		p := kfsched.ClusterPreferences{Weight: int64(r.IntN(101))}
		if r.IntN(3) == 0 {
			p.MinReplicas = int64(r.IntN(20))
		}
		if r.IntN(3) == 0 {
			m := p.MinReplicas + int64(r.IntN(60)) // fedkit rejects max < min; KubeFed never defined it
			p.MaxReplicas = &m
		}
		return p
	}
	switch r.IntN(4) {
	case 0: // no preferences at all: KubeFed's scheduler makes it {"*": {weight: 1}}
	case 1:
		spec.Clusters["*"] = pref()
	default:
		for _, c := range in.clusters {
			if r.IntN(4) != 0 {
				spec.Clusters[c] = pref()
			}
		}
		if r.IntN(2) == 0 {
			spec.Clusters["*"] = pref()
		}
		if r.IntN(3) == 0 { // a preference for a cluster that is not available
			spec.Clusters["gone"] = pref()
		}
	}
	for _, c := range in.clusters {
		if r.IntN(3) != 0 {
			in.current[c] = int64(r.IntN(120))
		}
		if withCapacity && r.IntN(3) == 0 {
			if in.capacity == nil {
				in.capacity = map[string]int64{}
			}
			in.capacity[c] = int64(r.IntN(80))
		}
	}
	in.rsp = &kfsched.ReplicaSchedulingPreference{Spec: spec}
	in.rsp.Name, in.rsp.Namespace = "app", "ns"
	return in
}

// kubeFedSchedule is what KubeFed v0.10's ReplicaScheduler writes for in
// (pkg/schedulingtypes/replicascheduler.go, GetSchedulingResult and schedule): the planner's
// plan plus its overflow, after an empty preference map became {"*": {weight: 1}}.
func kubeFedSchedule(t *testing.T, in input) (plan, overflow map[string]int64) {
	rsp := in.rsp.DeepCopy()
	if len(rsp.Spec.Clusters) == 0 {
		rsp.Spec.Clusters = map[string]kfsched.ClusterPreferences{"*": {Weight: 1}}
	}
	plan, overflow, err := planner.NewPlanner(rsp).Plan(in.clusters, in.current, in.capacity, in.key)
	if err != nil {
		t.Fatal(err)
	}
	return plan, overflow
}

// fedkitPlan converts in's preference with package migrate (through unstructured, as the
// CLI reads it), defaults it as the API server and the scheduler loop do, and divides.
func fedkitPlan(t *testing.T, in input) scheduler.Plan {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in.rsp)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: u}
	obj.SetAPIVersion(migrate.KubeFedSchedulingGroupVersion)
	obj.SetKind("ReplicaSchedulingPreference")
	rsp, warnings, err := migrate.PreferenceFrom(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		t.Fatalf("unexpected warning: %s", w)
	}
	federation.DefaultReplicaSchedulingPreference(rsp)
	states := make([]scheduler.ClusterState, len(in.clusters))
	for i, c := range in.clusters {
		states[i].Name = c
		if v, ok := in.current[c]; ok {
			states[i].Current = &v
		}
		if v, ok := in.capacity[c]; ok {
			states[i].Capacity = &v
		}
	}
	req := scheduler.RequestFor(federation.Key{}, rsp, states)
	req.Key = in.key
	plan, err := scheduler.Divide(req)
	if err != nil {
		t.Fatalf("Divide: %v", err)
	}
	return plan
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func describe(in input) string {
	return fmt.Sprintf("key %s, clusters %v, current %v, capacity %v, total %d, rebalance %v, preferences %s",
		in.key, in.clusters, in.current, in.capacity, in.rsp.Spec.TotalReplicas, in.rsp.Spec.Rebalance, prefs(in.rsp.Spec.Clusters))
}

func prefs(m map[string]kfsched.ClusterPreferences) string {
	s := "{"
	for k, p := range m {
		mx := "-"
		if p.MaxReplicas != nil {
			mx = fmt.Sprint(*p.MaxReplicas)
		}
		s += fmt.Sprintf(" %s:{min %d max %s weight %d}", k, p.MinReplicas, mx, p.Weight)
	}
	return s + " }"
}

// TestMigratedScheduleIsKubeFeds: for random preferences and cluster sets without capacity
// estimates (KubeFed's only come from pods unschedulable for a minute), the converted
// preference's schedule is the one KubeFed's scheduler wrote, cluster for cluster: a
// migration moves no replica.
func TestMigratedScheduleIsKubeFeds(t *testing.T) {
	for i := range *cases {
		s := *seed + uint64(i)
		in := random(rand.New(rand.NewPCG(s, 23)), false)
		plan, overflow := kubeFedSchedule(t, in)
		want := map[string]int64{}
		for c, v := range plan {
			want[c] += v
		}
		for c, v := range overflow {
			want[c] += v
		}
		got := fedkitPlan(t, in)
		if diff := cmp.Diff(nonZero(want), nonZero(got.Replicas)); diff != "" {
			t.Fatalf("seed %d (-seed=%d -cases=1 replays it): %s\nschedule differs (-KubeFed +fedkit):\n%s", s, s, describe(in), diff)
		}
	}
}

// TestMigratedPlanIsKubeFedsPlannerWithCapacity: with capacity estimates as well, fedkit's
// plan and overflow are the planner's. (KubeFed's scheduler then added the overflow to the
// plan, sending replicas where they could not run; fedkit's scheduler writes the plan and
// keeps the overflow out of status.schedule. README says so.)
func TestMigratedPlanIsKubeFedsPlannerWithCapacity(t *testing.T) {
	for i := range *cases {
		s := *seed + uint64(i)
		in := random(rand.New(rand.NewPCG(s, 42)), true)
		plan, overflow := kubeFedSchedule(t, in)
		got := fedkitPlan(t, in)
		if diff := cmp.Diff(nonZero(plan), nonZero(got.Replicas)); diff != "" {
			t.Fatalf("seed %d: %s\nplan differs (-KubeFed +fedkit):\n%s", s, describe(in), diff)
		}
		if diff := cmp.Diff(nonZero(overflow), nonZero(got.Overflow)); diff != "" {
			t.Fatalf("seed %d: %s\noverflow differs (-KubeFed +fedkit):\n%s", s, describe(in), diff)
		}
	}
}
