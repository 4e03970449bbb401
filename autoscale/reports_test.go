package autoscale_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fedkit/fedkit/autoscale"
	"github.com/fedkit/fedkit/autoscale/recommend"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
)

// TestReports: the source of pull members reads the agent's report on the host. The pods
// come back as the agent read them; a report of an agent that stopped renewing it is as old
// as its last read, so Recommend counts the cluster stale (status's freshness rule) and,
// with one member of one, there is no quorum; a metric the agent does not report is Failed,
// never 0.
func TestReports(t *testing.T) {
	ctx := context.Background()
	now := t0
	host := fake.NewHost("host")
	ns := federation.PullNamespace("edge")
	if err := host.Apply(`{apiVersion: v1, kind: Namespace, metadata: {name: ` + ns + `}}`); err != nil {
		t.Fatal(err)
	}
	key := federation.Key{Namespace: "shop", Name: "web"}
	cpu := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}}
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType}}}
	req := autoscale.SampleRequest{Cluster: "edge", Type: federation.DeploymentType, Key: key, Metrics: []autoscalingv2.MetricSpec{cpu, pods}, Pull: true, Now: now}
	src := autoscale.Reports{Host: host}

	s, err := src.Sample(ctx, req)
	if err != nil || !s.Read.Equal(now) || s.Replicas != 0 {
		t.Errorf("no Assignment: Sample = %+v, %v; want nothing running, read now", s, err)
	}

	started := now.Add(-time.Hour)
	pod := autoscale.Pod{Name: "web-1", Phase: corev1.PodRunning, Ready: corev1.ConditionTrue, ReadySince: started, Started: started,
		Containers: []autoscale.Container{{Name: "web", Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1000}}},
		Usage:      &autoscale.Usage{Timestamp: now.Add(-time.Minute), Window: 30 * time.Second, Containers: map[string]map[corev1.ResourceName]int64{"web": {corev1.ResourceCPU: 900}}}}
	as := &federation.Assignment{
		TypeMeta:   metav1.TypeMeta{APIVersion: federation.AssignmentGVK.GroupVersion().String(), Kind: "Assignment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: federation.AssignmentName(federation.DeploymentType.TargetGVR(), key.Namespace, key.Name)},
		Spec: federation.AssignmentSpec{Resource: federation.AssignedResourceOf(federation.DeploymentType.TargetGVR()), Change: federation.AssignmentApply,
			Manifest: federation.RawObject{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}}},
	}
	u, err := federation.ToUnstructured(as)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := host.Create(ctx, federation.AssignmentGVR, u); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Sample(ctx, req); err == nil || !strings.Contains(err.Error(), "has not reported the metrics") {
		t.Errorf("an Assignment without metrics: error %v, want 'has not reported the metrics'", err)
	}

	read := now.Add(-time.Minute) // the agent's last read, a minute ago
	u, err = host.Get(ctx, federation.AssignmentGVR, ns, as.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := federation.FromUnstructured(u, as); err != nil {
		t.Fatal(err)
	}
	as.Status.Object = federation.RawObject{Object: map[string]any{"status": map[string]any{"replicas": int64(1)}}}
	as.Status.Metrics = &federation.WorkloadMetrics{Read: metav1.Time{Time: read}, Pods: recommend.ReportOf([]autoscale.Pod{pod})}
	if u, err = federation.ToUnstructured(as); err != nil {
		t.Fatal(err)
	}
	if _, err := host.UpdateStatus(ctx, federation.AssignmentGVR, u); err != nil {
		t.Fatal(err)
	}
	s, err = src.Sample(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := autoscale.Sample{Cluster: "edge", Read: read, Replicas: 1, Pods: []autoscale.Pod{pod},
		Failed: map[string]string{autoscale.MetricKey(pods): "a pull cluster's agent reports Resource and ContainerResource metrics only"}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Sample (-want +got):\n%s", diff)
	}

	s.ClusterReady = true
	in := autoscale.Input{Autoscale: federation.Autoscale{MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpu}},
		Current: 1, Samples: []autoscale.Sample{s}, Now: now, StaleAfter: 45 * time.Second}
	if rec := autoscale.Recommend(in); rec.Quorum || rec.Active || rec.Clusters[0].Fresh {
		t.Errorf("a report read a minute ago with StaleAfter 45s: %+v; want the cluster stale and no quorum", rec)
	}
	in.StaleAfter = 2 * time.Minute
	if rec := autoscale.Recommend(in); !rec.Active || rec.Replicas != 2 {
		t.Errorf("the same report, fresh: %+v; want 2 (90%% of 60%%)", rec)
	}
}
