package preview_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
)

// TestAutoscalePreview: with the members' samples, the preview decides the fleet total as
// the autoscaler would (the same recommend.Explain), schedules that total and says why;
// without samples, the preference's total is scheduled and nothing is said of autoscaling.
func TestAutoscalePreview(t *testing.T) {
	rsp := webRSP(`{targetKind: FederatedDeployment, totalReplicas: 2, clusters: {us: {weight: 1}},
  autoscale: {maxReplicas: 10, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]}}`)
	in, err := preview.Decode([]byte(strings.Join([]string{fleet, web("{clusters: [{name: us}]}", ""), rsp}, "\n---\n")))
	require.NoError(t, err)
	in.Now = now
	without, err := preview.Run(in)
	require.NoError(t, err)
	require.Nil(t, without.Objects[0].Autoscale)
	require.Contains(t, rows(without.Objects[0]), "us: selected 2")

	// Two ready pods in us, each using 900m of the 1 cpu it asks: 90% of a 60% target.
	started := now.Add(-time.Hour)
	pod := func(name string) recommend.Pod {
		return recommend.Pod{Name: name, Phase: corev1.PodRunning, Ready: corev1.ConditionTrue, ReadySince: started, Started: started,
			Containers: []recommend.Container{{Name: "web", Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1000}}},
			Usage:      &recommend.Usage{Timestamp: now, Window: 30 * time.Second, Containers: map[string]map[corev1.ResourceName]int64{"web": {corev1.ResourceCPU: 900}}}}
	}
	in.Samples = map[federation.Key][]recommend.Sample{{Namespace: "shop", Name: "web"}: {
		{Cluster: "us", ClusterReady: true, Read: now, Replicas: 2, Pods: []recommend.Pod{pod("web-1"), pod("web-2")}},
	}}
	with, err := preview.Run(in)
	require.NoError(t, err)
	got := with.Objects[0].Autoscale
	require.NotNil(t, got)
	if diff := cmp.Diff(preview.Autoscale{Current: 2, Desired: 3, Message: "2 -> 3: cpu 90% of 60% over 2 ready pods in 1 of 1 cluster"},
		preview.Autoscale{Current: got.Current, Desired: got.Desired, Message: got.Message}); diff != "" {
		t.Errorf("Autoscale (-want +got):\n%s", diff)
	}
	require.Contains(t, got.Explanation, "cluster us: 2 replicas (fresh)")
	require.Contains(t, rows(with.Objects[0]), "us: selected 3", "the autoscaler's total is scheduled")
}
