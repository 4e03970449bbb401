package placement_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// exampleFleet is four clusters in three regions; one carries a GPU taint and one is not
// ready.
func exampleFleet() []federation.Cluster {
	mk := func(name, region, zone string, lbl map[string]string) federation.Cluster {
		c := federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}}
		c.Spec.Region, c.Spec.Zones = region, []string{zone}
		c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
		return c
	}
	fleet := []federation.Cluster{
		mk("aws-us-east", "us-east-1", "us-east-1a", map[string]string{"env": "prod"}),
		mk("aws-us-west", "us-west-2", "us-west-2a", map[string]string{"env": "prod"}),
		mk("gcp-eu-west", "europe-west1", "europe-west1-b", map[string]string{"env": "prod"}),
		mk("gpu-us-east", "us-east-1", "us-east-1b", map[string]string{"env": "prod"}),
	}
	fleet[3].Spec.Taints = []corev1.Taint{{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	fleet[1].Status.Conditions[0].Status = metav1.ConditionFalse
	fleet[1].Status.Conditions[0].Reason = "Unreachable"
	return fleet
}

func ExampleSelect() {
	p := federation.Placement{
		ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
	}
	names, err := placement.Select(p, exampleFleet())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(names)
	// Output: [aws-us-east gcp-eu-west]
}

func ExampleSelect_clusterList() {
	// A present clusters list wins over the selector; unknown names are dropped.
	p := federation.Placement{
		Clusters:        []federation.ClusterReference{{Name: "gcp-eu-west"}, {Name: "retired"}},
		ClusterSelector: &metav1.LabelSelector{},
	}
	names, _ := placement.Select(p, exampleFleet())
	fmt.Println(names)
	// Output: [gcp-eu-west]
}

func ExampleEvaluate() {
	p := federation.Placement{
		ClusterSelector: &metav1.LabelSelector{},
		ClusterAffinity: &federation.ClusterAffinity{Preferred: []federation.WeightedAffinityTerm{
			{Weight: 20, Term: federation.AffinityTerm{Regions: []string{"europe-west1"}}},
		}},
		MaxClusters: ptr32(1),
	}
	d, err := placement.Evaluate(p, exampleFleet())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range d.Selected {
		fmt.Printf("selected %s (score %d)\n", c.Name, c.Score)
	}
	why, _ := d.Why("gpu-us-east")
	fmt.Println("why not gpu-us-east:", why.Rule, "-", why.Detail)
	why, _ = d.Why("aws-us-west")
	fmt.Println("why not aws-us-west:", why.Rule, "-", why.Detail)
	fmt.Println(d.Summary())
	// Output:
	// selected gcp-eu-west (score 20)
	// why not gpu-us-east: Taint - taint gpu=true:NoSchedule not tolerated
	// why not aws-us-west: NotReady - Ready condition is False (Unreachable); implied taint federation.k8s.io/not-ready:NoExecute not tolerated
	// 1 of 4 clusters selected (gcp-eu-west); left out: aws-us-east: MaxClusters: ranked 2 of 2 eligible clusters, maxClusters is 1; aws-us-west: NotReady: Ready condition is False (Unreachable); implied taint federation.k8s.io/not-ready:NoExecute not tolerated; gpu-us-east: Taint: taint gpu=true:NoSchedule not tolerated
}

func ExampleEvaluate_spread() {
	// At least two regions, at most two clusters.
	p := federation.Placement{
		ClusterSelector: &metav1.LabelSelector{},
		Tolerations:     []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
		MaxClusters:     ptr32(2),
		SpreadConstraints: []federation.SpreadConstraint{
			{TopologyKey: placement.KeyRegion, MinGroups: 2},
		},
	}
	d, err := placement.Evaluate(p, exampleFleet())
	fmt.Println(d.Names(), err)
	// Output: [aws-us-east gcp-eu-west] <nil>
}

func ExampleDomain() {
	fleet := exampleFleet()
	fmt.Println(placement.Domain(&fleet[0], placement.KeyRegion), placement.Domain(&fleet[0], placement.KeyZone))
	// Output: us-east-1 us-east-1a
}

func ptr32(v int32) *int32 { return &v }

func ExampleEvaluate_twoKeys() {
	// Two regions and two providers with two clusters: taking the best-ranked cluster of each
	// new group (us/aws, then eu/aws) would miss gcp; Evaluate finds us/aws with eu/gcp.
	mk := func(name, region, provider string) federation.Cluster {
		c := federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		c.Spec.Region, c.Spec.Provider = region, provider
		c.Status.Conditions = []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}
		return c
	}
	fleet := []federation.Cluster{mk("c1", "us", "aws"), mk("c2", "eu", "aws"), mk("c3", "us", "gcp"), mk("c4", "eu", "gcp")}
	p := federation.Placement{
		ClusterSelector: &metav1.LabelSelector{},
		MaxClusters:     ptr32(2),
		SpreadConstraints: []federation.SpreadConstraint{
			{TopologyKey: placement.KeyRegion, MinGroups: 2, MaxSkew: 1},
			{TopologyKey: placement.KeyProvider, MinGroups: 2},
		},
	}
	d, err := placement.Evaluate(p, fleet)
	fmt.Println(d.Names(), err)
	// The region constraint sets maxSkew: the scheduler spreads replicas over these groups.
	for _, c := range d.Selected {
		fmt.Printf("%s: %s %s\n", c.Name, d.ReplicaSpread.TopologyKey, c.Domain)
	}
	// Output:
	// [c1 c4] <nil>
	// c1: region us
	// c4: region eu
}
