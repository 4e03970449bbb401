package scheduler_test

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

func i64(v int64) *int64 { return &v }

// printPlan prints one line per cluster and the summary.
func printPlan(plan scheduler.Plan) {
	for _, a := range plan.Clusters() {
		fmt.Println(a.Explain())
	}
	fmt.Println(plan.Summary())
}

func ExampleDivide() {
	plan, err := scheduler.Divide(scheduler.Request{
		Key:           "production/app-frontend",
		TotalReplicas: 9,
		Clusters: []scheduler.ClusterState{
			{Name: "cluster-aws-us-east"},
			{Name: "cluster-gcp-eu-west"},
			{Name: "cluster-azure-ap", Capacity: i64(1)},
		},
		Preferences: map[string]federation.ClusterPreferences{
			"*":                   {Weight: 1},
			"cluster-aws-us-east": {MinReplicas: i64(2), MaxReplicas: i64(6), Weight: 2},
		},
		Rebalance: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Replicas)
	printPlan(plan)
	// Output:
	// map[cluster-aws-us-east:5 cluster-azure-ap:1 cluster-gcp-eu-west:3]
	// cluster-aws-us-east: 5 = min 2 + weight 3 (weight 2)
	// cluster-gcp-eu-west: 3 (weight 1 from "*")
	// cluster-azure-ap: 1 (weight 1 from "*"), capped by capacity 1
	// 9/9 replicas on 3 of 3 clusters (Webster, Weighted); capped: cluster-azure-ap by capacity 1
}

// With Rebalance off, running replicas stay; one more replica in total moves exactly one.
func ExampleDivide_scaleUp() {
	req := scheduler.Request{
		Key:           "production/api",
		TotalReplicas: 10,
		Clusters: []scheduler.ClusterState{
			{Name: "eu", Current: i64(3)},
			{Name: "us", Current: i64(5)},
			{Name: "ap", Current: i64(2)},
		},
		Preferences: map[string]federation.ClusterPreferences{"*": {Weight: 1}},
	}
	for _, total := range []int64{10, 11, 12} {
		req.TotalReplicas = total
		plan, _ := scheduler.Divide(req)
		fmt.Println(total, plan.Replicas)
		for i := range req.Clusters {
			req.Clusters[i].Current = i64(plan.Replicas[req.Clusters[i].Name])
		}
	}
	// Output:
	// 10 map[ap:2 eu:3 us:5]
	// 11 map[ap:3 eu:3 us:5]
	// 12 map[ap:3 eu:4 us:5]
}

// KubeFed gives the plan KubeFed's planner gave, including its scale-down behaviour
// (kubernetes#31816); Webster keeps the weights in view.
func ExampleDivide_kubeFed() {
	req := scheduler.Request{
		TotalReplicas: 50,
		Clusters:      []scheduler.ClusterState{{Name: "A", Current: i64(10)}, {Name: "B", Current: i64(70)}},
		Algorithm:     federation.AlgorithmKubeFed,
	}
	kubefed, _ := scheduler.Divide(req)
	req.Algorithm = federation.AlgorithmWebster
	webster, _ := scheduler.Divide(req)
	fmt.Println("KubeFed:", kubefed.Replicas)
	fmt.Println("Webster:", webster.Replicas)
	// Output:
	// KubeFed: map[A:0 B:50]
	// Webster: map[A:10 B:40]
}

func ExampleDivide_capacityWeighted() {
	// Weights are the replicas each cluster can still take (Karmada's dynamic weights).
	plan, _ := scheduler.Divide(scheduler.Request{
		TotalReplicas: 12,
		Strategy:      federation.StrategyCapacityWeighted,
		Rebalance:     true,
		Clusters: []scheduler.ClusterState{
			{Name: "large", Capacity: i64(40)},
			{Name: "medium", Capacity: i64(20)},
			{Name: "small", Capacity: i64(2)},
		},
	})
	printPlan(plan)
	// Output:
	// large: 8 (weight 40 from "*")
	// medium: 4 (weight 20 from "*")
	// small: 0 (weight 2 from "*")
	// 12/12 replicas on 2 of 3 clusters (Webster, CapacityWeighted)
}

func ExampleDivide_costOptimized() {
	// Fill the cheapest clusters first, within their bounds, then spill over.
	plan, _ := scheduler.Divide(scheduler.Request{
		TotalReplicas: 10,
		Strategy:      federation.StrategyCostOptimized,
		Rebalance:     true,
		Clusters: []scheduler.ClusterState{
			{Name: "on-prem", Cost: i64(100), Capacity: i64(4)},
			{Name: "spot", Cost: i64(300)},
			{Name: "on-demand", Cost: i64(1000)},
		},
		Preferences: map[string]federation.ClusterPreferences{
			"*":    {Weight: 1},
			"spot": {Weight: 1, MaxReplicas: i64(5)},
		},
	})
	printPlan(plan)
	// Output:
	// on-prem: 4 (weight 1 from "*"), capped by capacity 4
	// spot: 5 (weight 1), capped by maxReplicas 5
	// on-demand: 1 (weight 1 from "*")
	// 10/10 replicas on 3 of 3 clusters (Webster, CostOptimized); capped: on-prem by capacity 4, spot by maxReplicas 5
}

func ExampleDivide_spread() {
	// At least three regions, and no region more than one replica above an even share,
	// although us-east weighs four times the others.
	plan, _ := scheduler.Divide(scheduler.Request{
		TotalReplicas: 9,
		Rebalance:     true,
		Spread:        &scheduler.Spread{MinDomains: 3, MaxSkew: 1},
		Clusters: []scheduler.ClusterState{
			{Name: "us-1", Domain: "us-east"},
			{Name: "us-2", Domain: "us-east"},
			{Name: "eu-1", Domain: "eu-west"},
			{Name: "ap-1", Domain: "ap-south"},
		},
		Preferences: map[string]federation.ClusterPreferences{
			"*":    {Weight: 1},
			"us-1": {Weight: 2},
			"us-2": {Weight: 2},
		},
	})
	fmt.Println(plan.Replicas)
	// Output: map[ap-1:3 eu-1:2 us-1:2 us-2:2]
}

func ExampleDivide_duplicated() {
	// Every cluster gets the whole count: for kinds whose replicas are not divided.
	plan, _ := scheduler.Divide(scheduler.Request{
		TotalReplicas: 3,
		Strategy:      federation.StrategyDuplicated,
		Clusters:      []scheduler.ClusterState{{Name: "a"}, {Name: "b"}, {Name: "c", Capacity: i64(2)}},
	})
	fmt.Println(plan.Replicas, plan.Overflow)
	// Output: map[a:3 b:3 c:2] map[c:1]
}

func ExamplePlan_Schedule() {
	plan, _ := scheduler.Divide(scheduler.Request{
		TotalReplicas: 4,
		Clusters:      []scheduler.ClusterState{{Name: "b"}, {Name: "a"}},
	})
	// The loop writes this as status.schedule, in placement order.
	fmt.Printf("%+v\n", plan.Schedule().Clusters)
	// Output: [{Name:b Replicas:2} {Name:a Replicas:2}]
}
