package recommend_test

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
)

// Explain tells what the autoscaler would do for a fleet: two fresh members whose pods run
// at 90% of a 60% cpu target, and a third that has not answered for two minutes, whose two
// replicas hold.
func ExampleExplain() {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	pod := func(name string, cpu int64) recommend.Pod {
		return recommend.Pod{
			Name: name, Phase: corev1.PodRunning, Ready: corev1.ConditionTrue,
			ReadySince: now.Add(-time.Hour), Started: now.Add(-time.Hour),
			Containers: []recommend.Container{{Name: "app", Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1000}}},
			Usage: &recommend.Usage{Timestamp: now, Window: 30 * time.Second,
				Containers: map[string]map[corev1.ResourceName]int64{"app": {corev1.ResourceCPU: cpu}}},
		}
	}
	utilization := int32(60)
	_, report := recommend.Explain(recommend.DecideInput{Input: recommend.Input{
		Autoscale: federation.Autoscale{MaxReplicas: 20, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(utilization)}},
		Current:   6,
		Samples: []recommend.Sample{
			{Cluster: "eu", ClusterReady: true, Read: now, Replicas: 2, Pods: []recommend.Pod{pod("web-1", 900), pod("web-2", 900)}},
			{Cluster: "us", ClusterReady: true, Read: now, Replicas: 2, Pods: []recommend.Pod{pod("web-1", 900), pod("web-2", 900)}},
			{Cluster: "ap", ClusterReady: true, Read: now.Add(-2 * time.Minute), Replicas: 2},
		},
		Now: now, StaleAfter: 45 * time.Second,
	}})
	fmt.Println(report)
	// Output:
	// total: 6 -> 8: cpu 90% of 60% over 4 ready pods in 2 of 3 clusters; ap holds 2 (stale)
	//   metric cpu: 8 (cpu 90% of 60% over 4 ready pods in 2 of 3 clusters)
	//   cluster ap: 2 replicas (stale: last read 2m0s ago)
	//   cluster eu: 2 replicas (fresh)
	//   cluster us: 2 replicas (fresh)
	//   ScalingActive=True ValidMetricFound
	//   AbleToScale=True ReadyForNewScale
	//   ScalingLimited=False DesiredWithinRange
}

// cpuUtilization is a Resource metric of cpu at a target utilization.
func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &percent},
	}}
}
